package crc64

import "testing"

// Redis's test vector (crc64.c).
func TestJones(t *testing.T) {
	if got := Update(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64 = %#x", got)
	}
	if got := Update(Update(0, []byte("1234")), []byte("56789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("incremental crc64 = %#x", got)
	}
}
