package server_test

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// An unauthenticated TLS client that never reads its NOAUTH replies is
// closed (its output past 16 KiB + 1024 bytes), as a plain one.
func TestTLSUnauthOutputLimit(t *testing.T) {
	certs := hotkvtest.MakeCerts(t)
	_, addr := startTLS(t, certs, hotkvtest.WithConfig("requirepass", "foobar"))
	c, err := tls.Dial("tcp", addr, certs.ClientTLS(true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cmd := hotkvtest.EncodeCommand("SET", "x", "5")
	deadline := time.Now().Add(10 * time.Second)
	n := 0
	for time.Now().Before(deadline) {
		_ = c.SetWriteDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write(cmd); err != nil {
			t.Logf("closed after %d commands: %v", n, err)
			return
		}
		n++
	}
	t.Fatalf("still open after %d commands", n)
}
