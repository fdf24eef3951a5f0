package resp

import "sync/atomic"

// References: a long bulk reply can refer to the bytes it sends instead of
// copying them into Buf, as Redis 8's copy avoidance refers to the string
// object (_addBulkStrRefToBufferOrList). The reply is then Buf with each
// reference's bytes inserted at its offset; Len, Segment, Truncate, Cut and
// Paste work on that whole. Only a writer whose owner writes it out with
// Segment turns them on (TakeRefs); for any other Buf stays the whole reply.
//
// The referenced bytes must not change until written: the keyspace copies a
// string before changing it in place while it is marked shared
// (keyspace.Entry.Share, Writable).

// Ref is a reference: B's bytes go at Buf offset Off.
type Ref struct {
	Off int
	B   []byte
}

// RefMin is the shortest bulk reply a writer refers to rather than copies
// (Redis's COPY_AVOID_MIN_STRING_SIZE, as keyspace.ShareMin).
const RefMin = 16 << 10

// TakeRefs makes BulkRef refer to long replies from now on, while on holds
// true (DEBUG REPLY-COPY-AVOIDANCE turns it off for every client).
func (w *Writer) TakeRefs(on *atomic.Bool) { w.refsOK = on }

// BulkRef appends b as a bulk reply, like Bulk; a writer that takes
// references (TakeRefs) refers to a b of at least RefMin bytes instead of
// copying it. It reports whether it referred: then b must not change until
// the reply is written.
func (w *Writer) BulkRef(b []byte) bool {
	if w.refsOK == nil || len(b) < RefMin || !w.refsOK.Load() {
		w.Bulk(b)
		return false
	}
	w.header('$', int64(len(b)))
	w.Refs = append(w.Refs, Ref{Off: len(w.Buf), B: b})
	w.refBytes += len(b)
	w.Buf = append(w.Buf, '\r', '\n')
	return true
}

// Len is the length of the whole reply: the sealed head, Buf and the
// referenced bytes.
func (w *Writer) Len() int { return w.sealed.bytes + len(w.Buf) + w.refBytes }

// Referenced is how many bytes of the reply are references.
func (w *Writer) Referenced() int { return w.sealed.refBytes + w.refBytes }

// Held is how many bytes of the reply the writer holds itself (Len without
// the references).
func (w *Writer) Held() int { return w.sealed.bytes - w.sealed.refBytes + len(w.Buf) }

// Cap is the memory the writer's buffers take: Buf's capacity and the
// sealed head's.
func (w *Writer) Cap() int { return w.sealed.capBytes + cap(w.Buf) }

// sealedHead is the reply's head moved out of Buf by Seal: its pieces in
// order, each a piece of an earlier Buf or a referenced value.
type sealedHead struct {
	pieces   [][]byte
	bytes    int // their total length
	refBytes int // how many of them are references
	capBytes int // the capacity of the earlier Bufs they keep
	// the piece the last Segment call found, and its offset: the writers
	// call Segment at increasing offsets
	at, atOff int
}

// SealMin is the Buf length from which Seal moves it out.
const SealMin = 256 << 10

// Seal moves a Buf of at least SealMin bytes, and its references, out into
// the reply's sealed head, so the reply that follows starts a new Buf: a
// reply buffer that grows to megabytes (a client that pipelines big replies
// and reads slowly) grows as a list of pieces and is never copied whole
// into a bigger one, as Redis's reply list of blocks. The whole reply is
// unchanged (Len, Segment); only the marks (Buf offsets) taken before Seal
// are void, so it is called between two commands' replies.
func (w *Writer) Seal() {
	if len(w.Buf) < SealMin {
		return
	}
	h := &w.sealed
	prev := 0
	for i, r := range w.Refs {
		if r.Off > prev {
			h.pieces = append(h.pieces, w.Buf[prev:r.Off:r.Off])
		}
		h.pieces = append(h.pieces, r.B)
		w.Refs[i] = Ref{}
		prev = r.Off
	}
	if prev < len(w.Buf) {
		h.pieces = append(h.pieces, w.Buf[prev:len(w.Buf):len(w.Buf)])
	}
	h.bytes += len(w.Buf) + w.refBytes
	h.refBytes += w.refBytes
	h.capBytes += cap(w.Buf)
	w.Buf, w.Refs, w.refBytes = nil, w.Refs[:0], 0
}

// segment is Segment within the sealed head (off < h.bytes).
func (h *sealedHead) segment(off int) []byte {
	if off < h.atOff {
		h.at, h.atOff = 0, 0
	}
	for h.atOff+len(h.pieces[h.at]) <= off {
		h.atOff += len(h.pieces[h.at])
		h.at++
	}
	return h.pieces[h.at][off-h.atOff:]
}

// reset empties the sealed head, keeping no piece alive.
func (h *sealedHead) reset() {
	if h.pieces == nil {
		return
	}
	clear(h.pieces)
	*h = sealedHead{pieces: h.pieces[:0]}
}

// Segment returns the contiguous bytes of the whole reply that start at
// offset off (0 <= off < Len): a piece of Buf or of a reference.
func (w *Writer) Segment(off int) []byte {
	if off < w.sealed.bytes {
		return w.sealed.segment(off)
	}
	off -= w.sealed.bytes
	if len(w.Refs) == 0 {
		return w.Buf[off:]
	}
	prev := 0 // Buf offset where the current piece of Buf starts
	for _, r := range w.Refs {
		if n := r.Off - prev; off < n {
			return w.Buf[prev+off : r.Off]
		} else {
			off -= n
		}
		if off < len(r.B) {
			return r.B[off:]
		}
		off -= len(r.B)
		prev = r.Off
	}
	return w.Buf[prev+off:]
}

// Reset empties the reply (after it was written), keeping Buf's capacity.
func (w *Writer) Reset() {
	w.Buf = w.Buf[:0]
	w.dropRefs(0)
	w.sealed.reset()
}

// Truncate drops the reply from Buf offset mark on (a mark is len(Buf)
// taken between two replies, after the last Seal), references included.
func (w *Writer) Truncate(mark int) {
	w.Buf = w.Buf[:mark]
	w.dropRefs(mark)
}

// dropRefs forgets the references at Buf offsets from mark on.
func (w *Writer) dropRefs(mark int) {
	i := len(w.Refs)
	for i > 0 && w.Refs[i-1].Off >= mark {
		i--
		w.refBytes -= len(w.Refs[i].B)
		w.Refs[i] = Ref{} // keep no value alive
	}
	w.Refs = w.Refs[:i]
}

// Tail is a reply cut off a writer (Cut), to be appended again (Paste).
type Tail struct {
	buf  []byte
	refs []Ref
}

// Cut removes the reply from Buf offset mark on and returns it.
func (w *Writer) Cut(mark int) Tail {
	t := Tail{buf: append([]byte(nil), w.Buf[mark:]...)}
	for _, r := range w.Refs {
		if r.Off >= mark {
			t.refs = append(t.refs, Ref{Off: r.Off - mark, B: r.B})
		}
	}
	w.Truncate(mark)
	return t
}

// Paste appends a reply Cut returned.
func (w *Writer) Paste(t Tail) {
	base := len(w.Buf)
	w.Buf = append(w.Buf, t.buf...)
	for _, r := range t.refs {
		w.Refs = append(w.Refs, Ref{Off: base + r.Off, B: r.B})
		w.refBytes += len(r.B)
	}
}
