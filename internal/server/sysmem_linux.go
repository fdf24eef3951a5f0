package server

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// totalSystemMemory is the machine's RAM in bytes (INFO total_system_memory,
// Redis's zmalloc_get_memory_size); 0 when unknown.
func totalSystemMemory() uint64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return uint64(si.Totalram) * uint64(si.Unit)
}

// anonHugePages is the process's transparent huge pages in bytes (Redis's
// THPGetAnonHugePagesSize: the AnonHugePages line of smaps); 0 when unknown.
func anonHugePages() int64 {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(b, []byte("AnonHugePages:"))
	if !ok {
		return 0
	}
	f := bytes.Fields(rest)
	if len(f) == 0 {
		return 0
	}
	kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return kb << 10
}
