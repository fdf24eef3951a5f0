package server

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"

	"github.com/hotkv/hotkv/internal/command"
)

// memStats fills MEMORY STATS / INFO memory / MEMORY DOCTOR (Redis's
// getMemoryOverheadData) from HotKV's own figures:
//
//   - total.allocated is used_memory (maxmemory.go), startup.allocated the
//     same at startup, peak.allocated its highest value seen;
//   - the per-database overhead is the key tables' bucket arrays plus one
//     dict entry per key, and the expiring set (keyspace.DB.Overhead);
//   - clients.normal is the sum of the clients' tot-mem (their structures,
//     query and reply buffers, queued output, MULTI state: clientmem.go),
//     clients.slaves the same for replicas' connections (their queued
//     stream); replication.backlog is the backlog's ring (allocated whole);
//   - lua.caches / functions.caches are the script caches' code bytes,
//     script.VMs the figure INFO's used_memory_vm_total shows;
//   - cluster.links, aof.buffer: 0, HotKV has none of them;
//   - allocator.* come from Go's runtime/metrics: allocated = heap objects
//     (live and not yet swept), active = heap spans in use, resident = the
//     heap memory mapped and not returned to the OS; muzzy is 0.
//
// Engine lock held.
func (s *Server) memStats() command.MemoryStats {
	if !s.mem.settled { // INFO settles before its first section
		s.settleForReport()
	}
	used := s.mem.reportUsed
	s.notePeak(used)
	st := command.MemoryStats{
		PeakAllocated:    int64(s.memPeak),
		TotalAllocated:   int64(used),
		StartupAllocated: int64(s.mem.startup),
		ScriptVMs:        2 * 32768,
		LuaCaches:        int64(s.scripts.vm.CacheBytes()),
		FunctionsCaches:  int64(s.scripts.vm.LibraryBytes()),
		CachedScripts:    int64(s.scripts.vm.Len()),
	}
	s.mu.Lock()
	st.Clients = int64(len(s.clients))
	for _, cl := range s.clients {
		if cl.isReplica() {
			st.ClientsSlaves += max(cl.mem.tot.Load(), clientStructBytes)
		} else {
			st.ClientsNormal += max(cl.mem.tot.Load(), clientStructBytes)
		}
	}
	s.mu.Unlock()
	if active, size, _, _ := s.repl.BacklogInfo(); active {
		st.ReplBacklog = size
	}
	total := st.StartupAllocated + st.ClientsNormal + st.ClientsSlaves + st.ReplBacklog + st.LuaCaches + st.FunctionsCaches + st.ScriptVMs
	if h := s.hk.sess; h != nil { // a HOTKEYS session's sketches (hotkeysGetMemoryUsage)
		total += int64(h.MemBytes())
	}
	for _, db := range s.ks.DBs {
		if db.Len() == 0 && db.Expires() == 0 {
			continue
		}
		main, expires, lut, rehashing := db.Overhead()
		st.DBs = append(st.DBs, command.DBOverhead{ID: db.ID, Main: main, Expires: expires})
		total += main + expires
		st.HashtableLUT += lut
		st.HashtableRehashing += rehashing
		if db.Rehashing() {
			st.RehashingCount++
		}
		st.Keys += int64(db.Len())
	}
	st.OverheadTotal = total
	st.Dataset = max(int64(used)-total, 0)
	if st.Keys > 0 {
		st.BytesPerKey = st.Dataset / st.Keys
	}
	net := int64(1)
	if int64(used) > st.StartupAllocated {
		net = int64(used) - st.StartupAllocated
	}
	st.DatasetPerc = float64(st.Dataset) * 100 / float64(net)
	if st.PeakAllocated > 0 {
		st.PeakPerc = float64(used) * 100 / float64(st.PeakAllocated)
	}
	st.AllocatorAllocated, st.AllocatorActive, st.AllocatorResident = allocatorStats()
	st.RSS = int64(rssBytes())
	return st
}

var allocSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/heap/unused:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
}

// allocatorStats maps Go's heap classes on jemalloc's allocated / active /
// resident.
func allocatorStats() (allocated, active, resident int64) {
	metrics.Read(allocSamples)
	obj, unused, free := int64(allocSamples[0].Value.Uint64()), int64(allocSamples[1].Value.Uint64()), int64(allocSamples[2].Value.Uint64())
	return obj, obj + unused, obj + unused + free
}

// MemoryStats implements command.Server (MEMORY STATS, MEMORY DOCTOR).
func (s *Server) MemoryStats() command.MemoryStats { return s.memStats() }

// MemoryPurge implements MEMORY PURGE: a GC that returns every free page
// to the OS (debug.FreeOSMemory); the used-memory estimate re-anchors on it.
func (s *Server) MemoryPurge() {
	debug.FreeOSMemory()
	s.readMem()
}

// MallocStats implements MEMORY MALLOC-STATS: Go's runtime/metrics memory
// and GC figures, one "name value" line each (jemalloc's report in Redis).
func (s *Server) MallocStats() string {
	var names []string
	for _, d := range metrics.All() {
		if (strings.HasPrefix(d.Name, "/memory/") || strings.HasPrefix(d.Name, "/gc/")) &&
			(d.Kind == metrics.KindUint64 || d.Kind == metrics.KindFloat64) {
			names = append(names, d.Name)
		}
	}
	sort.Strings(names)
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	b := []byte("___ Begin Go runtime memory statistics (" + runtime.Version() + ") ___\n")
	for _, sm := range samples {
		b = append(b, sm.Name...)
		b = append(b, ' ')
		if sm.Value.Kind() == metrics.KindUint64 {
			b = strconv.AppendUint(b, sm.Value.Uint64(), 10)
		} else {
			b = strconv.AppendFloat(b, sm.Value.Float64(), 'f', -1, 64)
		}
		b = append(b, '\n')
	}
	b = append(b, "--- End Go runtime memory statistics ---\n"...)
	return string(b)
}
