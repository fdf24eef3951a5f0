package server

import (
	"os"
	"runtime"
	"syscall"
)

// stopSelf stops the process with SIGSTOP sent to the calling thread, so
// that it stops before it goes on (a signal to the process may be taken by
// another thread while this one runs on); it returns once continued.
func stopSelf() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = syscall.Tgkill(os.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
}
