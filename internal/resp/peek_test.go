package resp

import (
	"bytes"
	"io"
	"testing"
)

// peekThenRead buffers in, peeks at the requests after the first, then reads
// them all: it returns the peeked keys and the commands read.
func peekThenRead(t *testing.T, in string, max int) (peeked []Peeked, cmds [][][]byte) {
	t.Helper()
	r := NewReader(bytes.NewReader([]byte(in)), nil)
	argv, err := r.ReadCommand()
	if err != nil {
		return nil, nil
	}
	cmds = append(cmds, clone(argv))
	for _, p := range r.PeekArgs(nil, max) {
		peeked = append(peeked, Peeked{bytes.Clone(p.Arg1), bytes.Clone(p.Arg2), bytes.Clone(p.Last)})
	}
	for {
		argv, ok, err := r.TryCommand()
		if !ok || err != nil {
			return peeked, cmds
		}
		cmds = append(cmds, clone(argv))
	}
}

func clone(argv [][]byte) [][]byte {
	out := make([][]byte, len(argv))
	for i, a := range argv {
		out[i] = bytes.Clone(a)
	}
	return out
}

func TestPeekArgs(t *testing.T) {
	set := func(k string) string { return "*3\r\n$3\r\nSET\r\n$" + itoa(len(k)) + "\r\n" + k + "\r\n$1\r\nv\r\n" }
	get := func(k string) string { return "*2\r\n$3\r\nGET\r\n$" + itoa(len(k)) + "\r\n" + k + "\r\n" }
	for _, c := range []struct {
		name, in string
		max      int
		want     []string
	}{
		{"pipeline", get("a") + set("bb") + get("") + set("dddd") + "*4\r\n$4\r\nZADD\r\n$1\r\nz\r\n$1\r\n1\r\n$1\r\nm\r\n", 16, []string{"bb", "", "dddd", "z"}},
		{"max", get("a") + get("b") + get("c") + get("d"), 2, []string{"b", "c"}},
		{"nothing behind", get("a"), 16, nil},
		{"partial request stops", get("a") + get("b") + "*2\r\n$3\r\nGET\r\n$5\r\nab", 16, []string{"b"}},
		{"partial length line stops", get("a") + "*2\r\n$3\r\nGET\r\n$1", 16, nil},
		{"one argument stops", get("a") + "*1\r\n$4\r\nPING\r\n" + get("b"), 16, nil},
		{"inline stops", get("a") + "GET b\r\n" + get("c"), 16, nil},
		{"empty request stops", get("a") + "*0\r\n" + get("c"), 16, nil},
		{"negative bulk stops", get("a") + "*2\r\n$3\r\nGET\r\n$-1\r\n" + get("c"), 16, nil},
		{"missing dollar stops", get("a") + "*2\r\n$3\r\nGET\r\n:1\r\n" + get("c"), 16, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			peeked, cmds := peekThenRead(t, c.in, c.max)
			var got []string
			for i, p := range peeked {
				got = append(got, string(p.Arg1))
				if i+1 < len(cmds) {
					checkPeek(t, c.in, i, p, cmds[i+1])
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("PeekArgs = %q, want %q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("PeekArgs = %q, want %q", got, c.want)
				}
			}
		})
	}
}

// A peek inside a request that is still arriving returns nothing and
// leaves the parse intact.
func TestPeekArgsMidRequest(t *testing.T) {
	pr, pw := io.Pipe()
	r := NewReader(pr, nil)
	go func() {
		pw.Write([]byte("*2\r\n$3\r\nGET\r\n$3\r\nab"))
		pw.Write([]byte("c\r\n"))
		pw.Close()
	}()
	if _, ok, _ := r.TryCommand(); ok {
		t.Fatal("nothing buffered yet")
	}
	if err := r.fill(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := r.TryCommand(); ok {
		t.Fatal("request is partial")
	}
	if got := r.PeekArgs(nil, 16); len(got) != 0 {
		t.Fatalf("PeekArgs mid-request = %q", got)
	}
	argv, err := r.ReadCommand()
	if err != nil || string(argv[1]) != "abc" {
		t.Fatalf("ReadCommand = %q, %v", argv, err)
	}
}

// checkPeek fails unless p is argv's second, third and last argument.
func checkPeek(t *testing.T, in string, i int, p Peeked, argv [][]byte) {
	t.Helper()
	var arg2 []byte
	if len(argv) > 2 {
		arg2 = argv[2]
	}
	if len(argv) < 2 || !bytes.Equal(argv[1], p.Arg1) || !bytes.Equal(arg2, p.Arg2) ||
		(arg2 == nil) != (p.Arg2 == nil) || !bytes.Equal(argv[len(argv)-1], p.Last) {
		t.Fatalf("input %q: peek %d = %q, request %q", in, i, p, argv)
	}
}

// FuzzPeekArgs: whatever the input, what PeekArgs reports for the i-th
// request behind the first is that request's arguments as TryCommand parses
// them (it may report requests TryCommand will reject, never other bytes).
func FuzzPeekArgs(f *testing.F) {
	readerSeeds(f)
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\na\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\nc\r\n"), byte(0))
	f.Fuzz(func(t *testing.T, in []byte, max byte) {
		if len(in) >= inlineMax {
			return
		}
		peeked, cmds := peekThenRead(t, string(in), int(max%20))
		if len(peeked) > int(max%20) {
			t.Fatalf("%d peeked, max %d", len(peeked), max%20)
		}
		for i, p := range peeked {
			if i+1 >= len(cmds) {
				break // the reader stopped (an error): the peek was only a hint
			}
			checkPeek(t, string(in), i, p, cmds[i+1])
		}
	})
}
