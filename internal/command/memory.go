package command

import (
	"strconv"

	"github.com/hotkv/hotkv/internal/resp"
)

// memoryCommands is MEMORY (redis.io's "server" group; object.c's
// memoryCommand). The figures come from the server (Server.MemoryStats): see
// internal/server/memstats.go for what each one measures in HotKV.
func memoryCommands() []*Spec {
	special := []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"}
	return []*Spec{
		{Name: "memory", Arity: -2, Subs: []*Spec{
			{Name: "doctor", Arity: 2, Flags: ReportsMemory, Tips: special, Run: memoryDoctor},
			{Name: "help", Arity: 2, Flags: Loading | Stale, Run: memoryHelp},
			{Name: "malloc-stats", Arity: 2, Tips: special, Run: memoryMallocStats},
			{Name: "purge", Arity: 2, Tips: []string{"request_policy:all_shards", "response_policy:all_succeeded"}, Run: memoryPurge},
			{Name: "stats", Arity: 2, Flags: ReportsMemory, Tips: special, Run: memoryStats},
			{Name: "usage", Arity: -3, Flags: ReadOnly, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RO", Run: memoryUsage},
		}},
	}
}

// memoryUsage is MEMORY USAGE key [SAMPLES count]: the estimated bytes of the
// key, its value and its table entry (keyspace.DB.Usage). Nested values are
// sampled count times (default 5; 0 samples all). Like Redis it does not
// expire the key on the way.
func memoryUsage(c *Ctx) {
	samples := int64(5)
	for j := 3; j < len(c.Argv); j++ {
		if !eqFold(c.Argv[j], "samples") || j+1 >= len(c.Argv) {
			c.Err(ErrSyntax)
			return
		}
		n, ok := resp.ParseInt(c.Argv[j+1])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		if n < 0 {
			c.Err(ErrSyntax)
			return
		}
		samples = n
		j++
	}
	s := int(min(samples, int64(^uint(0)>>1)))
	if samples == 0 {
		s = 0 // all
	}
	n, ok := c.DB.Usage(c.Argv[2], s)
	if !ok {
		c.W.Null()
		return
	}
	c.W.Int(n)
}

func memoryStats(c *Ctx) {
	st := c.Srv.MemoryStats()
	w := c.W
	w.MapLen(33 + len(st.DBs))
	pair := func(k string, v int64) { w.BulkString(k); w.Int(v) }
	pair("peak.allocated", st.PeakAllocated)
	pair("total.allocated", st.TotalAllocated)
	pair("startup.allocated", st.StartupAllocated)
	pair("replication.backlog", st.ReplBacklog)
	pair("replica.fullsync.buffer", 0)
	pair("clients.slaves", st.ClientsSlaves)
	pair("clients.normal", st.ClientsNormal)
	pair("cluster.links", 0)
	pair("aof.buffer", 0)
	pair("lua.caches", st.LuaCaches)
	pair("functions.caches", st.FunctionsCaches)
	pair("script.VMs", st.ScriptVMs)
	for _, db := range st.DBs {
		w.BulkString("db." + strconv.Itoa(db.ID))
		w.MapLen(2)
		pair("overhead.hashtable.main", db.Main)
		pair("overhead.hashtable.expires", db.Expires)
	}
	pair("overhead.db.hashtable.lut", st.HashtableLUT)
	pair("overhead.db.hashtable.rehashing", st.HashtableRehashing)
	pair("overhead.total", st.OverheadTotal)
	pair("db.dict.rehashing.count", st.RehashingCount)
	pair("keys.count", st.Keys)
	pair("keys.bytes-per-key", st.BytesPerKey)
	pair("dataset.bytes", st.Dataset)
	w.BulkString("dataset.percentage")
	w.Double(st.DatasetPerc)
	w.BulkString("peak.percentage")
	w.Double(st.PeakPerc)
	pair("allocator.allocated", st.AllocatorAllocated)
	pair("allocator.active", st.AllocatorActive)
	pair("allocator.resident", st.AllocatorResident)
	pair("allocator.muzzy", 0)
	ratio := func(a, b int64) float64 {
		if b <= 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	w.BulkString("allocator-fragmentation.ratio")
	w.Double(ratio(st.AllocatorActive, st.AllocatorAllocated))
	pair("allocator-fragmentation.bytes", st.AllocatorActive-st.AllocatorAllocated)
	w.BulkString("allocator-rss.ratio")
	w.Double(ratio(st.AllocatorResident, st.AllocatorActive))
	pair("allocator-rss.bytes", st.AllocatorResident-st.AllocatorActive)
	w.BulkString("rss-overhead.ratio")
	w.Double(ratio(st.RSS, st.AllocatorResident))
	pair("rss-overhead.bytes", st.RSS-st.AllocatorResident)
	w.BulkString("fragmentation")
	w.Double(ratio(st.RSS, st.TotalAllocated))
	pair("fragmentation.bytes", st.RSS-st.TotalAllocated)
}

func memoryMallocStats(c *Ctx) { c.W.Verbatim("txt", c.Srv.MallocStats()) }

func memoryPurge(c *Ctx) {
	c.Srv.MemoryPurge()
	c.W.SimpleString("OK")
}

// memoryDoctor is getMemoryDoctorReport, with HotKV's figures: the checks
// that concern jemalloc's own overheads compare the Go heap's classes.
func memoryDoctor(c *Ctx) {
	st := c.Srv.MemoryStats()
	var issues []string
	empty := st.TotalAllocated < 5<<20
	if !empty {
		if float64(st.PeakAllocated)/float64(st.TotalAllocated) > 1.5 {
			issues = append(issues, " * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n")
		}
		if frag := float64(st.RSS) / float64(st.TotalAllocated); frag > 1.4 && st.RSS-st.TotalAllocated > 10<<20 {
			issues = append(issues, " * High total RSS: This instance has a memory fragmentation and RSS overhead greater than 1.4 (this means that the Resident Set Size of the Redis process is much larger than the sum of the logical allocations Redis performed). This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. If the problem is a large peak memory, then there is no issue. Otherwise, make sure you are using the Jemalloc allocator and not the default libc malloc. Note: The currently used allocator is \"go\".\n\n")
		}
		if st.AllocatorAllocated > 0 && float64(st.AllocatorActive)/float64(st.AllocatorAllocated) > 1.1 && st.AllocatorActive-st.AllocatorAllocated > 10<<20 {
			issues = append(issues, " * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n")
		}
		if st.AllocatorActive > 0 && float64(st.AllocatorResident)/float64(st.AllocatorActive) > 1.1 && st.AllocatorResident-st.AllocatorActive > 10<<20 {
			issues = append(issues, " * High allocator RSS overhead: This instance has an RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the allocator is much larger than the sum what the allocator actually holds). This problem is usually due to a large peak memory (check if there is a peak memory entry above in the report), you can try the MEMORY PURGE command to reclaim it.\n\n")
		}
		if st.AllocatorResident > 0 && float64(st.RSS)/float64(st.AllocatorResident) > 1.1 && st.RSS-st.AllocatorResident > 10<<20 {
			issues = append(issues, " * High process RSS overhead: This instance has non-allocator RSS memory overhead is greater than 1.1 (this means that the Resident Set Size of the Redis process is much larger than the RSS the allocator holds). This problem may be due to Lua scripts or Modules.\n\n")
		}
		if st.Clients > 0 && st.ClientsNormal/st.Clients > 200<<10 {
			issues = append(issues, " * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n")
		}
		if st.CachedScripts > 1000 {
			issues = append(issues, " * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.\n\n")
		}
	}
	var s string
	switch {
	case empty:
		s = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
	case len(issues) == 0:
		s = "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n"
	default:
		s = "Sam, I detected a few issues in this Redis instance memory implants:\n\n"
		for _, is := range issues {
			s += is
		}
		s += "I'm here to keep you safe, Sam. I want to help you.\n"
	}
	c.W.Verbatim("txt", s)
}

func memoryHelp(c *Ctx) {
	writeHelp(c, "MEMORY",
		"DOCTOR",
		"    Return memory problems reports.",
		"MALLOC-STATS",
		"    Return internal statistics report from the memory allocator.",
		"PURGE",
		"    Attempt to purge dirty pages for reclamation by the allocator.",
		"STATS",
		"    Return information about the memory usage of the server.",
		"USAGE <key> [SAMPLES <count>]",
		"    Return memory in bytes used by <key> and its value. Nested values are",
		"    sampled up to <count> times (default: 5, 0 means sample all).",
	)
}
