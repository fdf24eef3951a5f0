package server

import (
	"errors"
	"io"
	"sync"
)

// payloadFeed hands a diskless full sync's payload from the link's
// goroutine (Write) to the loader (Read) without copying it: a Write
// returns once the loader has read all of it, or the loader stopped. The
// loader runs under the engine lock; when no bytes are ready it waits with
// the lock lent (wait), so that clients are served (-LOADING for what is
// not allowed while loading) while the master is slow, instead of waiting
// for the network with it. Redis's replica reads its socket with the main
// thread blocked, and answers once every loading-process-events-interval-
// bytes only.
type payloadFeed struct {
	chunks chan []byte
	done   chan struct{} // the loader read the chunk it was handed
	quit   chan struct{} // closed by Stop: the loader reads no more
	err    error         // why the payload ended (written before chunks closes)
	cur    []byte
	wait   func(func()) // runs its argument with the engine lock lent; nil: the reader holds no lock
	ended  bool
	// abort is closed by Abort: the loader's next read fails, whatever
	// the link already handed over (Redis's rioAbort)
	abort     chan struct{}
	abortOnce sync.Once
}

// errFeedAborted is the loader's error after Abort.
var errFeedAborted = errors.New("the sync was aborted (the main channel was lost)")

// Abort makes the loader's next read fail. Any goroutine, any number of
// times.
func (f *payloadFeed) Abort() { f.abortOnce.Do(func() { close(f.abort) }) }

// Aborted reports whether Abort was called: the load's yield checks it too,
// for what the loader already holds of the payload.
func (f *payloadFeed) Aborted() bool {
	select {
	case <-f.abort:
		return true
	default:
		return false
	}
}

// errFeedStopped is Write's error once the loader stopped reading.
var errFeedStopped = errors.New("the loader stopped reading the payload")

func newPayloadFeed(wait func(func())) *payloadFeed {
	return &payloadFeed{chunks: make(chan []byte), done: make(chan struct{}), quit: make(chan struct{}), wait: wait,
		abort: make(chan struct{})}
}

// Write implements io.Writer for the link's goroutine.
func (f *payloadFeed) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	select {
	case f.chunks <- p:
	case <-f.quit:
		return 0, errFeedStopped
	}
	select {
	case <-f.done:
		return len(p), nil
	case <-f.quit:
		return 0, errFeedStopped
	}
}

// End ends the payload with err (nil: a complete payload; the loader then
// reads io.EOF after it). The link's goroutine calls it once, after its
// last Write.
func (f *payloadFeed) End(err error) {
	f.err = err
	close(f.chunks)
}

// Read implements io.Reader for the loader.
func (f *payloadFeed) Read(b []byte) (int, error) {
	if f.Aborted() {
		return 0, errFeedAborted
	}
	if len(f.cur) == 0 {
		if f.ended {
			return 0, f.endErr()
		}
		var ok bool
		aborted := false
		recv := func() {
			select {
			case f.cur, ok = <-f.chunks:
			case <-f.abort:
				aborted = true
			}
		}
		select {
		case f.cur, ok = <-f.chunks:
		default:
			if f.wait == nil {
				recv()
			} else {
				f.wait(recv)
			}
		}
		if aborted {
			return 0, errFeedAborted
		}
		if !ok {
			f.ended = true
			return 0, f.endErr()
		}
	}
	n := copy(b, f.cur)
	f.cur = f.cur[n:]
	if len(f.cur) == 0 {
		f.done <- struct{}{}
	}
	return n, nil
}

func (f *payloadFeed) endErr() error {
	if f.err != nil {
		return f.err
	}
	return io.EOF
}

// Stop tells the link's goroutine the loader reads no more (it failed, or
// what follows the RDB's end is not wanted). The loader calls it once.
func (f *payloadFeed) Stop() { close(f.quit) }

// Drain reads and drops what is left of the payload, up to its end, without
// the engine lock (the link's goroutine has then returned: the link is at
// the stream). The loader calls it instead of Stop after a load that ended
// before the payload did.
func (f *payloadFeed) Drain() {
	for !f.ended {
		if len(f.cur) > 0 {
			f.cur = nil
			f.done <- struct{}{}
		}
		c, ok := <-f.chunks
		if !ok {
			f.ended = true
			return
		}
		f.cur = c
	}
}
