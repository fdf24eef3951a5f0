package repl

// Backlog is the replication backlog (Redis's repl_backlog): the last Size
// bytes of the stream, so that a replica that reconnects, or a sibling
// following a promoted replica, gets only what it missed (PSYNC answered
// +CONTINUE). Offsets are stream offsets: the first byte of the stream is
// offset 1, and End is master_repl_offset.
type Backlog struct {
	buf     []byte
	pos     int   // where the next byte goes
	histlen int   // bytes held
	end     int64 // the offset of the last byte held (master_repl_offset)
}

// NewBacklog returns an empty backlog of size bytes whose stream is at end.
func NewBacklog(size int, end int64) *Backlog {
	return &Backlog{buf: make([]byte, max(size, 16)), end: end}
}

// Size is repl_backlog_size.
func (b *Backlog) Size() int { return len(b.buf) }

// Histlen is repl_backlog_histlen.
func (b *Backlog) Histlen() int { return b.histlen }

// First is repl_backlog_first_byte_offset.
func (b *Backlog) First() int64 { return b.end - int64(b.histlen) + 1 }

// Append adds p to the stream.
func (b *Backlog) Append(p []byte) {
	b.end += int64(len(p))
	if len(p) >= len(b.buf) {
		p = p[len(p)-len(b.buf):]
		copy(b.buf, p)
		b.pos, b.histlen = 0, len(b.buf)
		return
	}
	n := copy(b.buf[b.pos:], p)
	if n < len(p) {
		copy(b.buf, p[n:])
	}
	b.pos = (b.pos + len(p)) % len(b.buf)
	b.histlen = min(b.histlen+len(p), len(b.buf))
}

// From returns a copy of the stream from offset off (the next byte a
// replica wants) to the end; ok is false when off is not held (nor End+1,
// which asks for nothing yet).
func (b *Backlog) From(off int64) (data []byte, ok bool) {
	if off < b.First() || off > b.end+1 {
		return nil, false
	}
	n := int(b.end - off + 1)
	out := make([]byte, n)
	start := (b.pos - n + len(b.buf)) % len(b.buf)
	k := copy(out, b.buf[start:min(start+n, len(b.buf))])
	copy(out[k:], b.buf[:n-k])
	return out, true
}

// Resize keeps the newest bytes in a backlog of size bytes
// (CONFIG SET repl-backlog-size).
func (b *Backlog) Resize(size int) {
	size = max(size, 16)
	if size == len(b.buf) {
		return
	}
	keep := min(b.histlen, size)
	data, _ := b.From(b.end - int64(keep) + 1)
	nb := &Backlog{buf: make([]byte, size), end: b.end - int64(keep)}
	nb.Append(data)
	*b = *nb
}
