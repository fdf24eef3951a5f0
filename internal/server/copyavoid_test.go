package server_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// readReplies reads n replies of a raw connection.
func readReplies(t *testing.T, c net.Conn, n int) []string {
	t.Helper()
	br := bufio.NewReader(c)
	var buf []byte
	out := make([]string, n)
	for i := range out {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf = buf[:0]
		if err := hotkvtest.ReadReplyFrom(br, &buf); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		out[i] = string(buf)
	}
	return out
}

func bulkOf(s string) string { return fmt.Sprintf("$%d\r\n%s\r\n", len(s), s) }

// A long string reply refers to the value rather than copying it (copy
// avoidance); a change in place that the same batch makes before the reply is
// written (SETRANGE, SETBIT, INCR's rewrite, SET of the same size, APPEND,
// inside MULTI too) must not show through: each GET sends the value it read.
func TestCopyAvoidanceRepliesKeepWhatTheyRead(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		c := hotkvtest.Dial(t, srv.Addr)
		v0 := strings.Repeat("a", 100_000)
		c.Do("SET", "big", v0)
		v1 := "ZZZ" + v0[3:]
		v2 := string(append([]byte{'Z' | 0x80}, v1[1:]...)) // SETBIT big 0 1
		v3 := strings.Repeat("b", 100_000)
		var req []byte
		for _, cmd := range [][]string{
			{"GET", "big"}, {"SETRANGE", "big", "0", "ZZZ"},
			{"GET", "big"}, {"SETBIT", "big", "0", "1"},
			{"MGET", "big", "nokey"}, {"SET", "big", v3}, // the same size: Redis's SET reuses nothing
			{"GET", "big"}, {"APPEND", "big", "c"},
			{"MULTI"}, {"GET", "big"}, {"SETRANGE", "big", "0", "x"}, {"GETDEL", "big"}, {"EXEC"},
		} {
			req = append(req, hotkvtest.EncodeCommand(cmd...)...)
		}
		c.Write(req)
		got := readReplies(t, c.Net(), 13)
		want := []string{bulkOf(v0), ":100000\r\n", bulkOf(v1), ":0\r\n",
			"*2\r\n" + bulkOf(v2) + "$-1\r\n", "+OK\r\n", bulkOf(v3), ":100001\r\n",
			"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "+QUEUED\r\n",
			"*3\r\n" + bulkOf(v3+"c") + ":100001\r\n" + bulkOf("x"+v3[1:]+"c")}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("reply %d: %d bytes (sha %x), want %d (sha %x)", i, len(got[i]),
					sha256.Sum256([]byte(got[i])), len(want[i]), sha256.Sum256([]byte(want[i])))
			}
		}
	})
}

// A big SET value that the reader read into an allocation of its own is kept
// by the keyspace without a copy; it stays shared, so that a change in place
// in the same transaction copies it first and the replicas get the value the
// SET wrote, then the change.
func TestOwnedSetValuePropagatesUnchanged(t *testing.T) {
	srv := startStreamServer(t)
	r := attachStream(t, srv.Addr, "SYNC")
	c := hotkvtest.Dial(t, srv.Addr)
	v := bytes.Repeat([]byte{0}, 1<<20)
	var req []byte
	req = append(req, hotkvtest.EncodeCommand("MULTI")...)
	req = append(req, hotkvtest.EncodeCommand("SET", "k", string(v))...)
	req = append(req, hotkvtest.EncodeCommand("SETRANGE", "k", "0", "changed")...)
	req = append(req, hotkvtest.EncodeCommand("EXEC")...)
	// in pieces, so that the value arrives after its header (the reader then
	// reads it into its own allocation)
	for len(req) > 0 {
		n := min(len(req), 64<<10)
		c.Write(req[:n])
		req = req[n:]
		time.Sleep(time.Millisecond)
	}
	readReplies(t, c.Net(), 4)
	var got []string
	for len(got) == 0 || got[len(got)-1] != "EXEC" {
		cmd := r.next(5 * time.Second)
		if cmd == "" {
			t.Fatalf("stream ended after %d commands", len(got))
		}
		if cmd != "SELECT 0" {
			got = append(got, cmd)
		}
	}
	for i, want := range []string{"MULTI", "SET k " + string(v), "SETRANGE k 0 changed", "EXEC"} {
		if i >= len(got) || got[i] != want {
			t.Fatalf("propagated command %d differs (%d commands); want %.20q...", i, len(got), want)
		}
	}
	if got := c.Do("GETRANGE", "k", "0", "9"); got != bulkOf("changed\x00\x00\x00") {
		t.Fatalf("value: %q", got)
	}
}
