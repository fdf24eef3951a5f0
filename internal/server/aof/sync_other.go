//go:build !linux

package aof

import "os"

// syncData is fsync where fdatasync is not available.
func syncData(f *os.File, _ bool) error { return f.Sync() }
