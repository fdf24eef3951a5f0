package script

import (
	"runtime/metrics"
	"sync"
)

// The script memory limit. Redis does not bound what a script allocates;
// HotKV does, so that one script cannot take the machine: a script may add
// at most MemLimit bytes to the heap (checked with the instruction hook, every
// memEvery instructions, and before each bounded builtin's result), after
// which it is stopped as SCRIPT KILL stops it, with errScriptOOM. The server
// sets MemLimit to half of maxmemory; with maxmemory 0 it is half of the
// machine's memory (defaultMemLimit).

// errScriptOOM is the reply of a script stopped by the memory limit.
const errScriptOOM = "OOM script memory limit reached (half of maxmemory, or of the machine's memory when maxmemory is 0)"

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
var heapMu sync.Mutex

// heapObjects is the bytes of the heap's objects, live and garbage.
func heapObjects() uint64 {
	heapMu.Lock()
	defer heapMu.Unlock()
	metrics.Read(heapSample)
	return heapSample[0].Value.Uint64()
}

// memLimit is the running script's limit: vm.MemLimit, or defaultMemLimit.
func (vm *VM) memLimit() int64 {
	if vm.MemLimit != nil {
		if n := vm.MemLimit(); n > 0 {
			return n
		}
	}
	return defaultMemLimit()
}

// allocLimit is the most one builtin may allocate for its result.
func (vm *VM) allocLimit() int64 {
	if vm.hook.memLimit > 0 {
		return vm.hook.memLimit
	}
	return vm.memLimit()
}

// defaultMemLimit is half of the machine's memory (4 GiB where it cannot
// be read).
var defaultMemLimit = sync.OnceValue(func() int64 {
	if n := totalMemory(); n > 0 {
		return int64(n / 2)
	}
	return 4 << 30
})
