//go:build amd64 || arm64

package keyspace

import "unsafe"

// prefetch asks the CPU to bring the cache line holding p into its caches
// (PREFETCHT0, PRFM PLDL1KEEP). It never faults, whatever p is.
//
//go:noescape
func prefetch(p unsafe.Pointer)
