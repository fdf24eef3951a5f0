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
	if c := cap(r.big); c > bigChunk {
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
