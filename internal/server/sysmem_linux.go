package server

import "golang.org/x/sys/unix"

// totalSystemMemory is the machine's RAM in bytes (INFO total_system_memory,
// Redis's zmalloc_get_memory_size); 0 when unknown.
func totalSystemMemory() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}
