package aof

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncData is redis_fsync on Linux: fdatasync, which skips metadata that
// does not matter for reading the data back (an append still flushes the
// size).
func syncData(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if err != unix.EINTR {
			return err
		}
	}
}
