package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// Past 128 kinds of error, errorstats turns itself off as Redis's does: the
// kinds are logged once and dropped (lazyfreed_objects), ERRORSTATS_DISABLED
// is all INFO shows, and CONFIG RESETSTAT turns it on again.
func TestErrorstatsLimit(t *testing.T) {
	var log hotkvtest.SyncBuffer
	srv := hotkvtest.Start(t, hotkvtest.WithLog(&log))
	c := hotkvtest.Dial(t, srv.Addr)
	for j := 1; j <= 300; j++ {
		want := fmt.Sprintf("-%d my error message\r\n", j)
		if r := c.Do("EVAL", "return redis.error_reply(string.format('%s my error message', ARGV[1]))", "0", fmt.Sprint(j)); r != want {
			t.Fatalf("reply %q, want %q", r, want)
		}
	}
	if n := strings.Count(log.String(), "Errorstats stopped adding new errors because the number of errors reached the limit"); n != 1 {
		t.Fatalf("logged %d times:\n%s", n, log.String())
	}
	if !strings.Contains(log.String(), "Current errors code list: 1, 10, 100, 101,") {
		t.Fatalf("code list not logged in order:\n%s", log.String())
	}
	info := c.Do("INFO", "errorstats")
	if !strings.Contains(info, "errorstat_ERRORSTATS_DISABLED:count=1\r\n") || strings.Count(info, "errorstat_") != 1 {
		t.Fatalf("INFO errorstats: %q", info)
	}
	if !strings.Contains(c.Do("INFO", "memory"), "lazyfreed_objects:128\r\n") {
		t.Fatalf("the 128 kinds are not counted as lazily freed: %q", c.Do("INFO", "memory"))
	}
	c.Do("CONFIG", "RESETSTAT")
	c.Do("GET") // wrong arity: an ERR
	if info := c.Do("INFO", "errorstats"); !strings.Contains(info, "errorstat_ERR:count=1\r\n") || strings.Contains(info, "DISABLED") {
		t.Fatalf("after RESETSTAT: %q", info)
	}
}

// A failed AUTH or HELLO AUTH counts in acl_access_denied_auth, as Redis's
// ACL denials do; CONFIG RESETSTAT zeroes it.
func TestAuthDeniedCounted(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("requirepass", "s3cret"))
	c := hotkvtest.Dial(t, srv.Addr)
	c.Do("AUTH", "wrong")
	c.Do("HELLO", "3", "AUTH", "default", "wrong")
	c.Do("AUTH", "s3cret")
	if info := c.Do("INFO", "stats"); !strings.Contains(info, "acl_access_denied_auth:2\r\n") {
		t.Fatalf("INFO stats: %q", info)
	}
	c.Do("CONFIG", "RESETSTAT")
	if info := c.Do("INFO", "stats"); !strings.Contains(info, "acl_access_denied_auth:0\r\n") {
		t.Fatalf("after RESETSTAT: %q", info)
	}
}
