//go:build !linux

package server

import (
	"os"
	"syscall"
)

// stopSelf stops the process with SIGSTOP; it returns once continued.
func stopSelf() { _ = syscall.Kill(os.Getpid(), syscall.SIGSTOP) }
