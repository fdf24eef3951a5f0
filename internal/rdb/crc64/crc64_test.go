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

// bytewise is the byte-at-a-time definition Update's slicing must agree with.
func bytewise(crc uint64, b []byte) uint64 {
	for _, x := range b {
		crc = tables[0][byte(crc)^x] ^ crc>>8
	}
	return crc
}

func TestSlicingAgreesWithBytewise(t *testing.T) {
	b := make([]byte, 4099)
	for i := range b {
		b[i] = byte(i*131 + i>>3)
	}
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 1000, 4099} {
		for _, seed := range []uint64{0, 0xe9c6d914c4b8d9ca} {
			if got, want := Update(seed, b[:n]), bytewise(seed, b[:n]); got != want {
				t.Fatalf("len %d seed %#x: %#x, want %#x", n, seed, got, want)
			}
		}
	}
}

func FuzzUpdate(f *testing.F) {
	f.Add([]byte("123456789"), uint64(0))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		if got, want := Update(seed, b), bytewise(seed, b); got != want {
			t.Fatalf("%#x, want %#x", got, want)
		}
	})
}

func BenchmarkUpdate(b *testing.B) {
	p := make([]byte, 1<<20)
	b.SetBytes(int64(len(p)))
	for b.Loop() {
		Update(0, p)
	}
}
