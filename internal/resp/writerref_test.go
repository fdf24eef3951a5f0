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

// Seal moves Buf and its references into the sealed head without changing
// the reply: through Segment (from any offset, stepping forward and going
// back), Len, Referenced and Held; replies after a Seal follow it, Truncate
// at a later mark drops only later replies, and Reset empties it all.
func TestWriterSealSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 100 {
		var w, cp Writer
		var on atomic.Bool
		on.Store(true)
		w.TakeRefs(&on)
		seals := 0
		for range 1 + rng.IntN(40) {
			switch rng.IntN(3) {
			case 0:
				b := bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, RefMin+rng.IntN(2*RefMin))
				w.BulkRef(b)
				cp.Bulk(b)
			case 1:
				b := bytes.Repeat([]byte{byte('A' + rng.IntN(26))}, rng.IntN(SealMin/2))
				w.Bulk(b)
				cp.Bulk(b)
			default:
				w.SimpleString("OK")
				cp.SimpleString("OK")
			}
			before := len(w.Buf)
			w.Seal()
			if len(w.Buf) == 0 && before > 0 {
				seals++
				if before < SealMin {
					t.Fatalf("sealed a Buf of %d bytes", before)
				}
			}
		}
		mark := len(w.Buf)
		cpMark := len(cp.Buf)
		w.SimpleString("dropped")
		w.Truncate(mark)
		if len(cp.Buf) != cpMark {
			t.Fatal("copy changed")
		}
		refs := w.Referenced()
		if w.Held()+refs != w.Len() || w.Len() != len(cp.Buf) {
			t.Fatalf("round %d: Len %d (held %d + refs %d), want %d", round, w.Len(), w.Held(), refs, len(cp.Buf))
		}
		step := 1 + rng.IntN(3*RefMin)
		if got := whole(t, &w, step); !bytes.Equal(got, cp.Buf) {
			t.Fatalf("round %d (%d seals): the bytes differ", round, seals)
		}
		if off := rng.IntN(w.Len()); !bytes.Equal(w.Segment(off), cp.Buf[off:off+len(w.Segment(off))]) {
			t.Fatalf("round %d: Segment(%d) after a full read differs", round, off)
		}
		w.Reset()
		if w.Len() != 0 || w.Referenced() != 0 || w.Held() != 0 || w.Cap() != cap(w.Buf) {
			t.Fatalf("after Reset: Len %d Referenced %d Held %d Cap %d", w.Len(), w.Referenced(), w.Held(), w.Cap())
		}
		if round == 0 && seals == 0 {
			t.Fatal("the first round never sealed")
		}
	}
}
