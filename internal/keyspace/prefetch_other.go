//go:build !amd64 && !arm64

package keyspace

import "unsafe"

// prefetch is a no-op where no prefetch instruction is wired up.
func prefetch(unsafe.Pointer) {}
