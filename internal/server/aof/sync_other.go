//go:build !linux

package aof

import "os"

// syncData is fsync where fdatasync is not available.
func syncData(f *os.File) error { return f.Sync() }
