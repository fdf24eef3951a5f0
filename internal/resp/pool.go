package resp

import "sync"

// A BufferPool lends Readers their read buffer, so that a connection holds
// one only while it has input to parse, as Redis 7.4+ lends its thread's
// reusable query buffer: an idle client holds no query buffer (CLIENT LIST
// qbuf=0 qbuf-free=0), and only a client left with part of a request keeps
// the buffer it was read into until that request is complete.
//
// Get returns a buffer of the Reader's size (32 KiB) whose contents are
// unspecified; Put takes back a buffer Get returned, which the caller must
// no longer use.
type BufferPool interface {
	Get() []byte
	Put([]byte)
}

// LocalPool is a BufferPool for Readers served by one goroutine (an event
// loop): a free list, without locks. It keeps at most keep buffers and
// leaves the rest to the garbage collector.
type LocalPool struct {
	free [][]byte
	keep int
}

// NewLocalPool returns a pool that keeps at most keep free buffers.
func NewLocalPool(keep int) *LocalPool { return &LocalPool{keep: keep} }

// Get returns a free buffer, or a new one.
func (p *LocalPool) Get() []byte {
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
		return b
	}
	return make([]byte, defaultBufSize)
}

// Put keeps b for the next Get, unless keep buffers are free already.
func (p *LocalPool) Put(b []byte) {
	if len(p.free) < p.keep && cap(b) == defaultBufSize {
		p.free = append(p.free, b[:defaultBufSize])
	}
}

// Free is how many buffers the pool holds.
func (p *LocalPool) Free() int { return len(p.free) }

// SharedPool is a BufferPool safe for concurrent use (goroutine-per-
// connection serving): a sync.Pool, which the garbage collector empties
// over two cycles when buffers stop being asked for.
type SharedPool struct{ p sync.Pool }

// Get returns a pooled buffer, or a new one.
func (p *SharedPool) Get() []byte {
	if b, ok := p.p.Get().(*[defaultBufSize]byte); ok {
		return b[:]
	}
	return make([]byte, defaultBufSize)
}

// Put pools b.
func (p *SharedPool) Put(b []byte) {
	if cap(b) == defaultBufSize {
		p.p.Put((*[defaultBufSize]byte)(b[:defaultBufSize])) // a pointer: no allocation
	}
}
