package server

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// TestPayloadFeed: what the link's goroutine writes reaches the loader
// unchanged, in order; the loader waits through wait (the engine lock lent)
// only when nothing is ready; the payload's end or failure reaches it after
// the last bytes; a loader that stops frees the writer.
func TestPayloadFeed(t *testing.T) {
	waits := 0
	f := newPayloadFeed(func(w func()) { waits++; w() })
	want := bytes.Repeat([]byte("0123456789abcdef"), 10000)
	go func() {
		for i := 0; i < len(want); i += 7000 {
			if _, err := f.Write(want[i:min(i+7000, len(want))]); err != nil {
				t.Error(err)
			}
			time.Sleep(time.Millisecond)
		}
		f.End(nil)
	}()
	got, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if waits == 0 {
		t.Fatal("the loader waited without lending the lock")
	}

	// a failed payload: its error after the bytes that came
	f = newPayloadFeed(nil)
	boom := errors.New("link lost")
	go func() {
		_, _ = f.Write([]byte("abc"))
		f.End(boom)
	}()
	got, err = io.ReadAll(f)
	if string(got) != "abc" || err != boom {
		t.Fatalf("got %q, %v", got, err)
	}

	// the loader stops: the writer is freed with an error
	f = newPayloadFeed(nil)
	done := make(chan error)
	go func() {
		_, err := f.Write([]byte("more than the loader takes"))
		done <- err
	}()
	b := make([]byte, 4)
	if n, _ := f.Read(b); n != 4 {
		t.Fatal("short read")
	}
	f.Stop()
	select {
	case err := <-done:
		if !errors.Is(err, errFeedStopped) {
			t.Fatalf("writer: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the writer hangs after Stop")
	}

	// Abort: the next read fails, even with bytes waiting, and a loader
	// waiting for bytes is woken
	f1 := newPayloadFeed(nil)
	go func() { _, _ = f1.Write([]byte("waiting")) }()
	time.Sleep(10 * time.Millisecond)
	f1.Abort()
	if _, err := f1.Read(b); err != errFeedAborted || !f1.Aborted() {
		t.Fatalf("read after Abort: %v", err)
	}
	f1.Stop()
	f2 := newPayloadFeed(nil)
	go func() { time.Sleep(20 * time.Millisecond); f2.Abort() }()
	if _, err := f2.Read(b); err != errFeedAborted {
		t.Fatalf("a waiting read after Abort: %v", err)
	}
	f2.Stop()

	// Drain takes what is left up to the end
	f = newPayloadFeed(nil)
	go func() {
		_, _ = f.Write([]byte("rdb"))
		_, _ = f.Write([]byte("tail"))
		f.End(nil)
	}()
	if n, _ := f.Read(b[:3]); n != 3 {
		t.Fatal("short read")
	}
	f.Drain()
	if n, err := f.Read(b); n != 0 || err != io.EOF {
		t.Fatalf("after Drain: %d %v", n, err)
	}
}
