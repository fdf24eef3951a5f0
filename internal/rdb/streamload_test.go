package rdb

import (
	"bytes"
	"io"
	"testing"
	"testing/iotest"

	"github.com/hotkv/hotkv/internal/keyspace"
)

// sampleFileSmall is sampleFile without its big string (a fuzz seed).
func sampleFileSmall(t testing.TB) []byte {
	src := keyspace.New(16, 3)
	src.SetNow(1700000000000)
	for name, e := range sample(src) {
		src.DBs[0].Insert([]byte(name), *e, 0)
	}
	var buf bytes.Buffer
	if err := Write(&buf, src, SaveInfo{RedisVersion: "8.6.3", Checksum: true}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// sampleFile is TestFileRoundTrip's dataset as an RDB file, with a string
// longer than the window sizes the tests use.
func sampleFile(t testing.TB) []byte {
	src := keyspace.New(16, 3)
	src.SetNow(1700000000000)
	for name, e := range sample(src) {
		src.DBs[0].Insert([]byte(name), *e, 0)
	}
	src.DBs[3].SetString([]byte("big"), bytes.Repeat([]byte("0123456789"), 5000), false)
	e := src.DBs[5].SetString([]byte("ttl"), []byte("v"), false)
	src.DBs[5].SetExpire([]byte("ttl"), e, 1700000005000)
	var buf bytes.Buffer
	info := SaveInfo{RedisVersion: "8.6.3", CTime: 1700000000, Functions: []string{"#!lua name=a\n"}, Checksum: true}
	if err := Write(&buf, src, info); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// dumpAll describes every key of ks, database by database.
func dumpAll(ks *keyspace.Keyspace) map[string]string {
	out := map[string]string{}
	for _, db := range ks.DBs {
		for cur := uint64(0); ; {
			cur = db.Scan(cur, func(k string, e *keyspace.Entry) {
				out[string(rune('0'+db.ID))+":"+k] = describe(e)
			})
			if cur == 0 {
				break
			}
		}
	}
	return out
}

// unsized hides a reader's length: Load reads it as a stream of unknown
// size (a replica's EOF-marked payload).
type unsized struct{ r io.Reader }

func (u unsized) Read(p []byte) (int, error) { return u.r.Read(p) }

func withWindow(t *testing.T, n int) {
	old := window
	window = n
	t.Cleanup(func() { window = old })
}

// TestLoadStreamed loads the same file whole and as a stream through small
// windows and readers that return little at a time: the same keys, the
// same stream length, and the checksum checked across windows.
func TestLoadStreamed(t *testing.T) {
	file := sampleFile(t)
	want := keyspace.New(16, 1)
	wst, err := Load(bytes.NewReader(file), want, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if wst.Size != len(file) {
		t.Fatalf("size %d of %d", wst.Size, len(file))
	}
	readers := map[string]func([]byte) io.Reader{
		"one byte":  func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
		"half":      func(b []byte) io.Reader { return unsized{iotest.HalfReader(bytes.NewReader(b))} },
		"data+EOF":  func(b []byte) io.Reader { return unsized{iotest.DataErrReader(bytes.NewReader(b))} },
		"sized":     func(b []byte) io.Reader { return bytes.NewReader(b) },
		"unsized 1": func(b []byte) io.Reader { return unsized{bytes.NewReader(b)} },
	}
	for _, w := range []int{1, 7, 100, 4096, 1 << 20} {
		withWindow(t, w)
		for name, mk := range readers {
			ks := keyspace.New(16, 1)
			st, err := Load(mk(file), ks, LoadOptions{})
			if err != nil {
				t.Fatalf("window %d, %s: %v", w, name, err)
			}
			if st.Size != wst.Size || st.Loaded != wst.Loaded || st.FunctionLibraries != 1 {
				t.Fatalf("window %d, %s: stats %+v, want %+v", w, name, st, wst)
			}
			got, exp := dumpAll(ks), dumpAll(want)
			if len(got) != len(exp) {
				t.Fatalf("window %d, %s: %d keys, want %d", w, name, len(got), len(exp))
			}
			for k, v := range exp {
				if got[k] != v {
					t.Fatalf("window %d, %s: key %s differs", w, name, k)
				}
			}
			// a corrupt byte anywhere fails the load (the CRC spans windows)
			bad := append([]byte(nil), file...)
			bad[len(bad)/2] ^= 0x40
			if _, err := Load(mk(bad), keyspace.New(16, 1), LoadOptions{}); err == nil {
				t.Fatalf("window %d, %s: a corrupt file loaded", w, name)
			}
			// a stream cut short is an error, never a hang or a panic
			if _, err := Load(mk(file[:len(file)-3]), keyspace.New(16, 1), LoadOptions{}); err == nil {
				t.Fatalf("window %d, %s: a truncated file loaded", w, name)
			}
		}
	}
}

// TestLoadStreamReadError: a failing source ends the load with an error.
func TestLoadStreamReadError(t *testing.T) {
	file := sampleFile(t)
	withWindow(t, 64)
	r := io.MultiReader(bytes.NewReader(file[:len(file)/2]), iotest.ErrReader(io.ErrClosedPipe))
	if _, err := Load(unsized{r}, keyspace.New(16, 1), LoadOptions{}); err == nil {
		t.Fatal("loaded from a failing reader")
	}
}

// FuzzLoadStreamed: a file read as a stream through a small window loads
// exactly as it does whole (same keys, or an error both ways).
func FuzzLoadStreamed(f *testing.F) {
	f.Add(sampleFileSmall(f), uint8(7))
	f.Fuzz(func(t *testing.T, file []byte, w uint8) {
		whole := keyspace.New(16, 1)
		_, errWhole := Load(bytes.NewReader(file), whole, LoadOptions{})
		withWindow(t, int(w)+1)
		streamed := keyspace.New(16, 1)
		_, errStream := Load(unsized{iotest.HalfReader(bytes.NewReader(file))}, streamed, LoadOptions{})
		if (errWhole == nil) != (errStream == nil) {
			t.Fatalf("whole: %v, streamed: %v", errWhole, errStream)
		}
		if errWhole == nil && len(dumpAll(whole)) != len(dumpAll(streamed)) {
			t.Fatal("different keys")
		}
	})
}
