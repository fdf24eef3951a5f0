//go:build !linux

package script

// totalMemory is the machine's RAM in bytes (0: unknown).
func totalMemory() uint64 { return 0 }
