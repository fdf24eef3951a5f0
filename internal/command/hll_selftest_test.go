package command_test

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// PFSELFTEST runs Redis's HyperLogLog self test (register encodings, the
// estimator's error bounds); it replies +OK when every check holds. It is heavy
// (seconds, many more under the race detector), so it has its own deadline.
func TestPfselftest(t *testing.T) {
	srv := hotkvtest.Start(t)
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(hotkvtest.EncodeCommand("PFSELFTEST")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Minute))
	var buf []byte
	if err := hotkvtest.ReadReplyFrom(bufio.NewReader(c), &buf); err != nil {
		t.Fatal(err)
	}
	if string(buf) != "+OK\r\n" {
		t.Fatalf("PFSELFTEST: %q", buf)
	}
}
