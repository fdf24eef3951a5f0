package resp

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// A header announcing a huge bulk reserves memory only for the bytes that
// actually arrive (docs/decisions/0005): here 512 MiB announced, 10 bytes sent.
func TestBigBulkHeaderReservesNothingUnsent(t *testing.T) {
	in := "*2\r\n$3\r\nSET\r\n$536870000\r\n0123456789"
	r := NewReader(io.MultiReader(strings.NewReader(in)), NewLimits())
	if _, err := r.ReadCommand(); err != io.ErrUnexpectedEOF {
		t.Fatalf("err = %v", err)
	}
	if c := cap(r.big); c > bigChunk+2 {
		t.Fatalf("%d bytes reserved for 10 bytes received", c)
	}
}

// The growing buffer still assembles a big bulk exactly, fed in small reads.
func TestBigBulkGrowsToFit(t *testing.T) {
	val := bytes.Repeat([]byte("abcdefgh"), (3*bigChunk)/8+3)
	var cmd []byte
	cmd = append(cmd, "*2\r\n$3\r\nGET\r\n$"...)
	cmd = AppendInt(cmd, int64(len(val)))
	cmd = append(cmd, "\r\n"...)
	cmd = append(cmd, val...)
	cmd = append(cmd, "\r\n"...)
	r := NewReader(&chunkReader{data: cmd, n: 4093}, NewLimits())
	argv, err := r.ReadCommand()
	if err != nil {
		t.Fatal(err)
	}
	if string(argv[0]) != "GET" || !bytes.Equal(argv[1], val) {
		t.Fatalf("bulk of %d bytes came back as %d bytes", len(val), len(argv[1]))
	}
}

// A bulk of up to 1 MiB that arrives in pieces takes one allocation of its
// exact size (with its CRLF), which the reader never reuses: OwnedArgs says
// the command may keep it; an argument in the shared buffer it may not.
func TestBigBulkOneAllocationAndOwned(t *testing.T) {
	val := bytes.Repeat([]byte("v"), bigChunk)
	cmd := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$")
	cmd = AppendInt(cmd, int64(len(val)))
	cmd = append(cmd, "\r\n"...)
	cmd = append(cmd, val...)
	cmd = append(cmd, "\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"...)
	r := NewReader(&chunkReader{data: cmd, n: 4093}, NewLimits())
	argv, err := r.ReadCommand()
	if err != nil {
		t.Fatal(err)
	}
	if cap(argv[2]) != len(val) || !bytes.Equal(argv[2], val) {
		t.Fatalf("value: len %d cap %d", len(argv[2]), cap(argv[2]))
	}
	if got := r.OwnedArgs(argv); got != 1<<2 {
		t.Fatalf("OwnedArgs = %b, want only the value", got)
	}
	if r.OwnedArgs([][]byte{argv[0], argv[1], append([]byte(nil), argv[2]...)}) != 0 {
		t.Fatal("a copy of the value counted as the reader's own")
	}
	next, err := r.ReadCommand()
	if err != nil || string(next[0]) != "GET" {
		t.Fatalf("next: %q %v", next, err)
	}
	if r.OwnedArgs(next) != 0 || r.OwnedArgs(argv) != 0 {
		t.Fatal("owned arguments reported for a request without any, or an older one")
	}
}
