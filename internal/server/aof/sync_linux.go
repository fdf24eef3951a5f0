package aof

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// syncData is redis_fsync on Linux: fdatasync, which skips metadata that
// does not matter for reading the data back (an append still flushes the
// size). raw makes it a raw system call, which keeps the caller's P for the
// fsync's duration: only for an event loop's own thread, which blocks in
// epoll the same way.
func syncData(f *os.File, raw bool) error {
	for {
		var err error
		if raw {
			if _, _, e := syscall.RawSyscall(unix.SYS_FDATASYNC, f.Fd(), 0, 0); e != 0 {
				err = e
			}
		} else {
			err = unix.Fdatasync(int(f.Fd()))
		}
		if err != unix.EINTR {
			return err
		}
	}
}
