package resp

import (
	"bytes"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// whole reads the whole reply through Segment, from every starting offset a
// writer may have reached.
func whole(t *testing.T, w *Writer, step int) []byte {
	t.Helper()
	var out []byte
	for off := 0; off < w.Len(); {
		seg := w.Segment(off)
		if len(seg) == 0 {
			t.Fatalf("empty segment at %d of %d", off, w.Len())
		}
		n := min(len(seg), step)
		out = append(out, seg[:n]...)
		off += n
	}
	return out
}

// A writer that takes references sends exactly the bytes a copying writer
// sends, whatever the pieces a partial write leaves; Truncate, Cut and Paste
// keep the references in step with Buf.
func TestWriterRefsSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var ref, cp Writer
		var on atomic.Bool
		on.Store(true)
		ref.TakeRefs(&on)
		var marks []int
		for range 1 + rng.IntN(8) {
			marks = append(marks, len(ref.Buf))
			switch rng.IntN(3) {
			case 0:
				b := bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, RefMin+rng.IntN(3*RefMin))
				ref.BulkRef(b)
				cp.Bulk(b)
			case 1:
				b := bytes.Repeat([]byte("x"), rng.IntN(RefMin))
				if ref.BulkRef(b) {
					t.Fatal("a short bulk was referred to")
				}
				cp.Bulk(b)
			default:
				ref.SimpleString("OK")
				cp.SimpleString("OK")
			}
		}
		step := 1 + rng.IntN(5*RefMin)
		if got := whole(t, &ref, step); !bytes.Equal(got, cp.Buf) || ref.Len() != len(cp.Buf) {
			t.Fatalf("round %d: %d bytes through Segment, want %d", round, len(got), len(cp.Buf))
		}
		// cut a tail at a mark, paste it back: the same reply
		m := marks[rng.IntN(len(marks))]
		tail := ref.Cut(m)
		ref.SimpleString("PUSH")
		ref.Paste(tail)
		want := append(append([]byte(nil), cp.Buf[:cpMark(&cp, &ref, m)]...), "+PUSH\r\n"...)
		want = append(want, cp.Buf[cpMark(&cp, &ref, m):]...)
		if got := whole(t, &ref, step); !bytes.Equal(got, want) {
			t.Fatalf("round %d: Cut/Paste changed the reply", round)
		}
		ref.Truncate(m)
		if got := whole(t, &ref, step); !bytes.Equal(got, cp.Buf[:cpMark(&cp, &ref, m)]) || len(got) != ref.Len() {
			t.Fatalf("round %d: Truncate(%d) left %d bytes", round, m, len(got))
		}
		ref.Reset()
		if ref.Len() != 0 || len(ref.Refs) != 0 || ref.Referenced() != 0 {
			t.Fatal("Reset left a reference")
		}
	}
}

// cpMark maps a Buf mark of the referring writer to the copying writer's
// offset: the referenced bytes before it.
func cpMark(cp, ref *Writer, mark int) int {
	n := mark
	for _, r := range ref.Refs {
		if r.Off < mark {
			n += len(r.B)
		}
	}
	return n
}
