package childwrite

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The test binary is its own child (init runs Init).

func TestChildWritesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	w, err := Start(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), 300_000) // 4.8 MB: autosync runs
	for off := 0; off < len(want); off += 70_000 {
		if _, err := w.Write(want[off:min(off+70_000, len(want))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("file of %d bytes (%v), want %d", len(got), err, len(want))
	}
}

func TestKilledChildFailsTheJob(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	w, err := Start(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("partial")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(w.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the killed child did not exit")
	}
	// writing on fails, and so does the end, with the signal
	var killed *KilledError
	if _, err := w.Write(make([]byte, 1<<20)); !errors.As(err, &killed) {
		t.Fatalf("write after the kill: %v", err)
	}
	if err := w.Finish(); !errors.As(err, &killed) || killed.Signal != 9 {
		t.Fatalf("Finish after kill -9: %v", err)
	}
}

// The child runs the running image: a server whose binary was replaced or
// removed on disk (an upgrade) still writes its snapshots.
func TestChildIsTheRunningImage(t *testing.T) {
	exe, err := self()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/self/exe"); err == nil && exe != "/proc/self/exe" {
		t.Fatalf("child executable %q, want /proc/self/exe", exe)
	}
}
