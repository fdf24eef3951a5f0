//go:build !linux

package server

// totalSystemMemory is 0 where HotKV does not read the machine's RAM.
func totalSystemMemory() uint64 { return 0 }

// anonHugePages is 0 where HotKV does not read the process's huge pages.
func anonHugePages() int64 { return 0 }
