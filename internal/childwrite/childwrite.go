// Package childwrite writes a snapshot's file from a child process, as
// Redis's fork child writes its RDB and AOF base files. HotKV encodes the
// snapshot in the server process (keyspace.Snapshot: Go cannot fork); the
// bytes go down a pipe to a child, which writes the file (fsyncing every
// autosync bytes, then at the end) and exits 0 when the whole of it is on
// disk. The child is the job's handle, as in Redis: a BGSAVE or a rewrite
// whose child is killed (kill -9, the OOM killer) fails and leaves its
// temporary file behind for the server to remove; the kernel's writeback
// throttling falls on the process that writes the file, not on the server.
//
// The child is the server's own executable (/proc/self/exe) started with
// the environment variable below: Init, called from this package's init,
// runs the writer in place of the program and exits. Any binary that
// embeds the server (cmd/hotkv, a test binary) is therefore its own child.
package childwrite

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// env names the file the child writes; envSync its autosync period.
const (
	env     = "HOTKV_CHILD_WRITE_FILE"
	envSync = "HOTKV_CHILD_WRITE_AUTOSYNC"
)

func init() { Init() }

// Init runs the child's part and exits when this process was started as a
// child writer; otherwise it returns at once.
func Init() {
	path := os.Getenv(env)
	if path == "" {
		return
	}
	autosync, _ := strconv.ParseInt(os.Getenv(envSync), 10, 64)
	if err := child(path, autosync, os.Stdin); err != nil {
		fmt.Fprintf(os.Stderr, "hotkv snapshot writer: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// child copies in to the file path (created or truncated), fsyncing every
// autosync bytes when > 0, then fsyncs and closes it.
func child(path string, autosync int64, in io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(in, 256<<10)
	buf := make([]byte, 256<<10)
	var written, synced int64
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if _, err := f.Write(buf[:n]); err != nil {
				return err
			}
			written += int64(n)
			if autosync > 0 && written-synced >= autosync {
				if err := f.Sync(); err != nil {
					return err
				}
				synced = written
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// Writer is the parent's side of one child writer.
type Writer struct {
	cmd    *exec.Cmd
	pipe   io.WriteCloser
	exited chan struct{} // closed when the child has exited
	err    error         // cmd.Wait's result, once exited is closed
}

// Start starts a child that writes path from what is written to the
// Writer. autosync > 0 fsyncs the file every that many bytes.
func Start(path string, autosync int64) (*Writer, error) {
	exe, err := self()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env+"="+path, envSync+"="+strconv.FormatInt(autosync, 10))
	cmd.Stdout, cmd.Stderr = nil, os.Stderr
	cmd.SysProcAttr = childAttr()
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	w := &Writer{cmd: cmd, pipe: pipe, exited: make(chan struct{})}
	go func() {
		w.err = cmd.Wait()
		close(w.exited)
	}()
	return w, nil
}

// self is the running program's executable: /proc/self/exe where there is
// one (the running image, even after an upgrade replaced or removed the
// file on disk), else os.Executable.
func self() (string, error) {
	const proc = "/proc/self/exe"
	if _, err := os.Stat(proc); err == nil {
		return proc, nil
	}
	return os.Executable()
}

// Pid is the child's process id.
func (w *Writer) Pid() int { return w.cmd.Process.Pid }

// Write sends p to the child.
func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.pipe.Write(p)
	if err != nil {
		select {
		case <-w.exited:
			return n, w.exitError()
		default:
		}
	}
	return n, err
}

// Exited is closed when the child has exited.
func (w *Writer) Exited() <-chan struct{} { return w.exited }

// Finish ends the file: the pipe is closed and the child waited for. It
// returns nil when the child wrote, synced and closed the whole file.
func (w *Writer) Finish() error {
	_ = w.pipe.Close()
	<-w.exited
	return w.exitError()
}

// Feed runs feed, which writes the file's bytes to the child, then ends the
// file (Finish). When feed fails because the child died, the child's end
// (a KilledError for kill -9) is the error; when it fails otherwise, the
// child is killed.
func (w *Writer) Feed(feed func(io.Writer) error) error {
	if err := feed(w); err != nil {
		select {
		case <-w.exited:
			if cerr := w.Finish(); cerr != nil {
				return cerr
			}
		default:
			w.Kill()
		}
		return err
	}
	return w.Finish()
}

// AutosyncBytes is REDIS_AUTOSYNC_BYTES: with rdb-save-incremental-fsync
// or aof-rewrite-incremental-fsync the child fsyncs the file each time this
// many more bytes were written.
const AutosyncBytes = 4 << 20

// KeyDelay is rdb-key-save-delay for the job that feeds this child (Redis's
// child sleeps after each key it writes, debugDelay): us µs per key, or for
// a negative -N, 1 µs once in N keys on average. It returns the most keys a
// step may hand out (1 while there is a delay; 0, no cap, without) and the
// pause to run after each step, which returns false as soon as kill closes
// or the child exits (nil without a delay).
func (w *Writer) KeyDelay(us int64, kill <-chan struct{}) (maxKeys int, pause func(keys int) bool) {
	if us == 0 {
		return 0, nil
	}
	return 1, func(keys int) bool {
		t := time.NewTimer(KeyDelayFor(keys, us))
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-kill:
		case <-w.exited:
		}
		return false
	}
}

// KeyDelayFor is how long rdb-key-save-delay (us µs per key) pauses after
// keys keys: us each, or when us is negative one µs with a chance of 1 in
// -us per key (Redis's debugDelay).
func KeyDelayFor(keys int, us int64) time.Duration {
	if us >= 0 {
		return time.Duration(int64(keys)*us) * time.Microsecond
	}
	var d time.Duration
	for range keys {
		if rand.Int64N(-us) == 0 {
			d += time.Microsecond
		}
	}
	return d
}

// Kill stops the child (the job is abandoned) and waits for it.
func (w *Writer) Kill() {
	_ = w.pipe.Close()
	_ = w.cmd.Process.Kill()
	<-w.exited
}

// exitError describes how the child ended, as Redis logs a child's end:
// nil for exit status 0.
func (w *Writer) exitError() error {
	if w.err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(w.err, &ee) {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return &KilledError{Signal: int(st.Signal())}
		}
		return fmt.Errorf("the child writing the file exited with status %d", ee.ExitCode())
	}
	return w.err
}

// KilledError is a child that a signal ended (kill -9).
type KilledError struct{ Signal int }

func (e *KilledError) Error() string { return fmt.Sprintf("terminated by signal %d", e.Signal) }
