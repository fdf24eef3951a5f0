package resp

import (
	"strconv"
	"testing"
)

// smallHeaderCanon is the header smallHeader must accept: kind, 1-3 digits
// without a leading zero (or a lone 0), CRLF.
func smallHeaderCanon(b []byte, kind byte) (int64, int) {
	for i := 2; i <= 4 && i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			digits := string(b[1:i])
			n, err := strconv.ParseInt(digits, 10, 64)
			if b[0] != kind || err != nil || n < 0 || strconv.FormatInt(n, 10) != digits {
				return 0, 0
			}
			return n, i + 2
		}
	}
	return 0, 0
}

func TestSmallHeader(t *testing.T) {
	for _, c := range []struct {
		in string
		n  int64
		hl int
	}{
		{"$3\r\nGET", 3, 4}, {"$0\r\n", 0, 4}, {"$10\r\n", 10, 5}, {"$999\r\n", 999, 6},
		{"*6\r\n", 0, 0}, {"$1000\r\n", 0, 0}, {"$01\r\n", 0, 0}, {"$00\r\n", 0, 0},
		{"$-1\r\n", 0, 0}, {"$1a\r\n", 0, 0}, {"$3\r\r", 0, 0}, {"$3\r", 0, 0}, {"$\r\n", 0, 0},
		{"$12", 0, 0}, {"$3 \r\n", 0, 0}, {"$+3\r\n", 0, 0},
	} {
		n, hl := smallHeader([]byte(c.in), '$')
		if n != c.n || hl != c.hl {
			t.Errorf("smallHeader(%q) = %d, %d; want %d, %d", c.in, n, hl, c.n, c.hl)
		}
	}
	if n, hl := smallHeader([]byte("*16\r\n"), '*'); n != 16 || hl != 5 {
		t.Errorf("smallHeader(*16) = %d, %d", n, hl)
	}
}

// FuzzSmallHeader: smallHeader accepts exactly the canonical short headers,
// with their number (anything else goes to the general path).
func FuzzSmallHeader(f *testing.F) {
	for _, s := range []string{"$3\r\n", "$0\r\n", "$999\r\n", "$01\r\n", "*2\r\n", "$1000\r\n", "$3\r\r"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, kind := range []byte{'$', '*'} {
			n, hl := smallHeader(b, kind)
			wn, whl := smallHeaderCanon(b, kind)
			if n != wn || hl != whl {
				t.Fatalf("smallHeader(%q, %c) = %d, %d; want %d, %d", b, kind, n, hl, wn, whl)
			}
		}
	})
}
