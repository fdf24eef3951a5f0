package server

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/locks"
	"github.com/hotkv/hotkv/internal/pubsub"
	"github.com/hotkv/hotkv/internal/server/infofmt"
)

// HotKVVersion is this build's own version (INFO hotkv_version).
const HotKVVersion = "0.1.0"

// stats are the server counters INFO reports. Plain fields are guarded by the
// engine lock; atomics are touched outside it.
type stats struct {
	commands             int64
	dirty                int64
	errorReplies         int64
	syncFull             int64 // SYNC and PSYNC served (all full)
	syncPartialErr       int64 // PSYNC asking for a partial resync, refused
	syncPartialOK        int64 // PSYNC continued from the backlog
	unexpectedErrors     int64 // errors a replica's master's commands got (unexpected_error_replies)
	forks                int64 // child processes started: total_forks (snapshot.go)
	latestForkUs         int64 // how long starting the last one took: latest_fork_usec
	blockedClients       atomic.Int64
	evictedClients       atomic.Int64
	obufLimitDisconnects atomic.Int64
}

// infoSection is one INFO section: its name and the function that appends its body.
type infoSection struct {
	name     string
	title    string
	inDflt   bool
	generate func(s *Server, b []byte) []byte
}

// The sections in Redis's order; "default" is the ones marked inDflt, "all" all of
// them but debug, "everything" likewise (HotKV has no modules).
var infoSections = []infoSection{
	{"server", "Server", true, (*Server).infoServer},
	{"clients", "Clients", true, (*Server).infoClients},
	{"memory", "Memory", true, (*Server).infoMemory},
	{"persistence", "Persistence", true, func(s *Server, b []byte) []byte { return s.rdb.AppendInfo(b, s.aof.AppendInfo) }},
	{"threads", "Threads", true, (*Server).infoThreads},
	{"stats", "Stats", true, (*Server).infoStats},
	{"replication", "Replication", true, (*Server).infoReplication},
	{"cpu", "CPU", true, (*Server).infoCPU},
	{"hotkeys", "Hotkeys", true, (*Server).infoHotkeys},
	{"modules", "Modules", true, func(_ *Server, b []byte) []byte { return b }},
	{"commandstats", "Commandstats", false, (*Server).infoCommandstats},
	{"errorstats", "Errorstats", true, (*Server).infoErrorstats},
	{"latencystats", "Latencystats", false, (*Server).infoLatencystats},
	{"cluster", "Cluster", true, func(_ *Server, b []byte) []byte { return kv(b, "cluster_enabled", "0") }},
	{"keyspace", "Keyspace", true, (*Server).infoKeyspace},
	{"keysizes", "Keysizes", true, (*Server).infoKeysizes},
	{"locks", "Locks", false, (*Server).infoLocks}, // HotKV: the lock view (locks.go)
	{"debug", "Debug", false, (*Server).infoDebug},
}

// Info implements INFO [section ...]. Called with the engine lock held.
func (s *Server) Info(dst []byte, sections []string) []byte {
	want := map[string]bool{}
	all, dflt := false, len(sections) == 0
	for _, sec := range sections {
		switch sec {
		case "all":
			all = true
		case "everything": // all and the modules' sections: not debug
			all = true
		case "default":
			dflt = true
		default:
			want[sec] = true
		}
	}
	if all || dflt || want["memory"] {
		// used memory as it is before this report allocates its text: the
		// sections before Memory would otherwise count in it (a few KB live
		// at the GC), and be taken for data afterwards
		s.settleForReport()
	}
	first := true
	for _, sec := range infoSections {
		if !((all && sec.name != "debug") || want[sec.name] || (dflt && sec.inDflt)) {
			continue
		}
		if !first {
			dst = append(dst, "\r\n"...)
		}
		first = false
		dst = append(dst, "# "...)
		dst = append(dst, sec.title...)
		dst = append(dst, "\r\n"...)
		dst = sec.generate(s, dst)
	}
	return dst
}

func kv(b []byte, k, v string) []byte { return infofmt.KV(b, k, v) }

func kvi(b []byte, k string, v int64) []byte { return infofmt.KVI(b, k, v) }

func (s *Server) infoServer(b []byte) []byte {
	nowUs := s.clock.NowUs()
	up := (nowUs - s.startUs) / 1e6
	exe, _ := os.Executable()
	b = kv(b, "redis_version", command.Version)
	b = kv(b, "hotkv_version", HotKVVersion)
	b = kv(b, "redis_git_sha1", "00000000")
	b = kv(b, "redis_git_dirty", "0")
	b = kv(b, "redis_build_id", "0")
	b = kv(b, "redis_mode", "standalone")
	b = kv(b, "os", runtime.GOOS+" "+runtime.GOARCH)
	b = kv(b, "arch_bits", "64")
	b = kv(b, "monotonic_clock", "Go runtime monotonic clock")
	b = kv(b, "multiplexing_api", "go netpoll")
	b = kv(b, "atomicvar_api", "go-sync-atomic")
	b = kv(b, "gcc_version", "0.0.0")
	b = kv(b, "go_version", runtime.Version())
	b = kvi(b, "process_id", int64(os.Getpid()))
	b = kv(b, "process_supervised", "no")
	b = kv(b, "run_id", s.runID)
	b = kvi(b, "tcp_port", s.cfg.Int("port"))
	b = kvi(b, "server_time_usec", nowUs)
	b = kvi(b, "uptime_in_seconds", up)
	b = kvi(b, "uptime_in_days", up/86400)
	b = kvi(b, "hz", s.cfg.Int("hz"))
	b = kvi(b, "configured_hz", s.cfg.Int("hz"))
	b = kvi(b, "lru_clock", (nowUs/1e6)&(1<<24-1))
	b = kv(b, "executable", exe)
	b = kv(b, "config_file", s.cfg.File())
	b = kv(b, "io_threads_active", "0")
	b = appendListeners(b, s.net.Listeners(), s.net.TLSListeners(), s.cfg.String("bind"))
	return b
}

// infoThreads is INFO threads: Redis lists each I/O thread; HotKV's network
// loops are one thread of Redis's (io-threads 1), with every connection and
// the reads and writes of Stats.
func (s *Server) infoThreads(b []byte) []byte {
	s.mu.Lock()
	n := len(s.clients)
	s.mu.Unlock()
	b = append(b, "io_thread_0:clients="...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, ",reads="...)
	b = strconv.AppendInt(b, s.net.Stats.Reads.Load(), 10)
	b = append(b, ",writes="...)
	b = strconv.AppendInt(b, s.net.Stats.Writes.Load(), 10)
	return append(b, "\r\n"...)
}

func (s *Server) infoClients(b []byte) []byte {
	s.mu.Lock()
	n := len(s.clients)
	var maxIn, maxOut int64
	for _, cl := range s.clients {
		maxIn = max(maxIn, cl.mem.qbuf.Load()+cl.mem.qbufFree.Load())
		maxOut = max(maxOut, cl.mem.omem.Load())
	}
	s.mu.Unlock()
	b = kvi(b, "connected_clients", int64(n))
	b = kv(b, "cluster_connections", "0")
	b = kvi(b, "maxclients", s.cfg.Int("maxclients"))
	// the biggest query buffer and output beyond the reply buffer among the
	// clients now (Redis's are the peaks of the last few seconds)
	b = kvi(b, "client_recent_max_input_buffer", maxIn)
	b = kvi(b, "client_recent_max_output_buffer", maxOut)
	b = kvi(b, "blocked_clients", s.stats.blockedClients.Load())
	tc, _, _, _ := s.trk.Stats()
	b = kvi(b, "tracking_clients", int64(tc))
	b = kvi(b, "pubsub_clients", int64(s.pubsubClients()))
	wc, wk := s.watchStats()
	b = kvi(b, "watching_clients", int64(wc))
	inTimeout, blockingKeys, onNoKey := s.blockingStats()
	b = kvi(b, "clients_in_timeout_table", int64(inTimeout))
	b = kvi(b, "total_watched_keys", int64(wk))
	b = kvi(b, "total_blocking_keys", int64(blockingKeys))
	b = kvi(b, "total_blocking_keys_on_nokey", int64(onNoKey))
	return b
}

// pubsubClients counts the clients subscribed to at least one channel,
// pattern or shard channel (INFO clients pubsub_clients). Engine lock held.
func (s *Server) pubsubClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, cl := range s.clients {
		if cl.subscriptions() > 0 {
			n++
		}
	}
	return n
}

// blockingStats is INFO clients' clients_in_timeout_table (blocked clients
// with a timeout), total_blocking_keys (keys that clients block on) and
// total_blocking_keys_on_nokey (those of them with a client that a deleted
// key wakes: XREADGROUP). Engine lock held.
func (s *Server) blockingStats() (inTimeout, keys, onNoKey int) {
	for _, cls := range s.blocked.waiting {
		if len(cls) > 0 {
			keys++
		}
		for _, cl := range cls {
			if cl.block.noKey {
				onNoKey++
				break
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cl := range s.clients {
		if cl.block.on && cl.block.timer != nil {
			inTimeout++
		}
	}
	return inTimeout, keys, onNoKey
}

func human(n uint64) string {
	const unit = 1024
	switch {
	case n < unit:
		return strconv.FormatUint(n, 10) + "B"
	case n < unit*unit:
		return fmt.Sprintf("%.2fK", float64(n)/unit)
	case n < unit*unit*unit:
		return fmt.Sprintf("%.2fM", float64(n)/unit/unit)
	default:
		return fmt.Sprintf("%.2fG", float64(n)/unit/unit/unit)
	}
}

// rssBytes reads the resident set size from /proc (0 where unavailable).
func rssBytes() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}

func (s *Server) infoMemory(b []byte) []byte {
	st := s.memStats()
	used, rss := uint64(st.TotalAllocated), uint64(st.RSS)
	maxmem := s.maxmemory()
	u := func(k string, v int64) { b = kvi(b, k, v) }
	b = kv(b, "used_memory", strconv.FormatUint(used, 10))
	b = kv(b, "used_memory_human", human(used))
	b = kv(b, "used_memory_rss", strconv.FormatUint(rss, 10))
	b = kv(b, "used_memory_rss_human", human(rss))
	b = kv(b, "used_memory_peak", strconv.FormatUint(s.memPeak, 10))
	b = kv(b, "used_memory_peak_human", human(s.memPeak))
	b = kv(b, "used_memory_peak_time", strconv.FormatInt(s.memPeakTime, 10))
	b = kv(b, "used_memory_peak_perc", strconv.FormatFloat(st.PeakPerc, 'f', 2, 64)+"%")
	u("used_memory_overhead", st.OverheadTotal)
	u("used_memory_startup", st.StartupAllocated)
	u("used_memory_dataset", st.Dataset)
	b = kv(b, "used_memory_dataset_perc", strconv.FormatFloat(st.DatasetPerc, 'f', 2, 64)+"%")
	u("allocator_allocated", st.AllocatorAllocated)
	u("allocator_active", st.AllocatorActive)
	u("allocator_resident", st.AllocatorResident)
	u("allocator_muzzy", 0)
	sysMem := totalSystemMemory()
	b = kv(b, "total_system_memory", strconv.FormatUint(sysMem, 10))
	b = kv(b, "total_system_memory_human", human(sysMem))
	// the Lua interpreters' heaps are estimated (gopher-lua allocates on Go's
	// heap, counted in used_memory): an empty VM's 32 KB, plus the compiled
	// code, which grows with the code cached or loaded
	evalBytes, funcBytes := st.LuaCaches, st.FunctionsCaches
	vmEval, vmFunc := 32768+evalBytes, 32768+funcBytes
	b = kv(b, "used_memory_lua", strconv.FormatInt(vmEval, 10))
	b = kv(b, "used_memory_vm_eval", strconv.FormatInt(vmEval, 10))
	b = kv(b, "used_memory_lua_human", human(uint64(vmEval)))
	b = kv(b, "used_memory_scripts_eval", strconv.FormatInt(evalBytes, 10))
	b = kv(b, "number_of_cached_scripts", strconv.Itoa(s.scripts.vm.Len()))
	b = kv(b, "number_of_functions", strconv.Itoa(s.scripts.vm.NumFunctions()))
	b = kv(b, "number_of_libraries", strconv.Itoa(len(s.scripts.vm.Libraries())))
	b = kv(b, "used_memory_vm_functions", strconv.FormatInt(vmFunc, 10))
	b = kv(b, "used_memory_vm_total", strconv.FormatInt(vmEval+vmFunc, 10))
	b = kv(b, "used_memory_vm_total_human", human(uint64(vmEval+vmFunc)))
	b = kv(b, "used_memory_functions", strconv.FormatInt(funcBytes, 10))
	b = kv(b, "used_memory_scripts", strconv.FormatInt(evalBytes+funcBytes, 10))
	b = kv(b, "used_memory_scripts_human", human(uint64(evalBytes+funcBytes)))
	b = kv(b, "maxmemory", strconv.FormatUint(maxmem, 10))
	b = kv(b, "maxmemory_human", human(maxmem))
	b = kv(b, "maxmemory_policy", s.cfg.String("maxmemory-policy"))
	ratio := func(a, b int64) string {
		if b <= 0 {
			return "0.00"
		}
		return strconv.FormatFloat(float64(a)/float64(b), 'f', 2, 64)
	}
	b = kv(b, "allocator_frag_ratio", ratio(st.AllocatorActive, st.AllocatorAllocated))
	u("allocator_frag_bytes", st.AllocatorActive-st.AllocatorAllocated)
	b = kv(b, "allocator_rss_ratio", ratio(st.AllocatorResident, st.AllocatorActive))
	u("allocator_rss_bytes", st.AllocatorResident-st.AllocatorActive)
	b = kv(b, "rss_overhead_ratio", ratio(st.RSS, st.AllocatorResident))
	u("rss_overhead_bytes", st.RSS-st.AllocatorResident)
	b = kv(b, "mem_fragmentation_ratio", ratio(st.RSS, int64(used)))
	u("mem_fragmentation_bytes", st.RSS-int64(used))
	u("mem_not_counted_for_evict", 0)
	// the backlog's ring is allocated whole (repl/backlog.go): its size is
	// its memory; replicas' output is the clients' (not counted here)
	backlog := int64(0)
	if active, size, _, _ := s.repl.BacklogInfo(); active {
		backlog = size
	}
	fullSync, _ := s.fullSyncBuffer()
	u("mem_replication_backlog", backlog)
	u("mem_total_replication_buffers", backlog+fullSync)
	u("mem_replica_full_sync_buffer", fullSync)
	u("mem_clients_slaves", st.ClientsSlaves)
	u("mem_clients_normal", st.ClientsNormal)
	u("mem_cluster_slot_migration_output_buffer", 0)
	u("mem_cluster_slot_migration_input_buffer", 0)
	u("mem_cluster_slot_migration_input_buffer_peak", 0)
	u("mem_cluster_links", 0)
	u("mem_aof_buffer", 0)
	b = kv(b, "mem_allocator", "go-"+runtime.Version())
	u("mem_overhead_db_hashtable_rehashing", st.HashtableRehashing)
	u("active_defrag_running", 0)
	b = kv(b, "lazyfree_pending_objects", "0")
	u("lazyfreed_objects", s.ks.Stats.LazyFreed)
	b = kv(b, "go_gc_cycles", strconv.FormatUint(s.mem.cycles, 10))
	b = kv(b, "go_heap_live", strconv.FormatUint(s.mem.live, 10))
	return b
}

// infoStats appends INFO stats in Redis 8.6's order. What HotKV does not
// have is 0: replication bytes counted apart, partial resyncs (no backlog),
// active defragmentation, threaded I/O, reply buffer resizing, ACL denials
// other than authentication.
func (s *Server) infoStats(b []byte) []byte {
	z := func(names ...string) {
		for _, n := range names {
			b = kv(b, n, "0")
		}
	}
	b = kvi(b, "total_connections_received", s.net.Stats.ConnectionsReceived.Load())
	b = kvi(b, "total_commands_processed", s.stats.commands)
	b = kvi(b, "instantaneous_ops_per_sec", int64(s.inst.ops.mean()))
	b = kvi(b, "total_net_input_bytes", s.net.Stats.NetInput.Load())
	b = kvi(b, "total_net_output_bytes", s.net.Stats.NetOutput.Load())
	z("total_net_repl_input_bytes", "total_net_repl_output_bytes")
	b = kv(b, "instantaneous_input_kbps", strconv.FormatFloat(s.inst.in.mean(), 'f', 2, 64))
	b = kv(b, "instantaneous_output_kbps", strconv.FormatFloat(s.inst.out.mean(), 'f', 2, 64))
	b = kv(b, "instantaneous_input_repl_kbps", "0.00")
	b = kv(b, "instantaneous_output_repl_kbps", "0.00")
	b = kvi(b, "rejected_connections", s.net.Stats.RejectedConnections.Load())
	b = kvi(b, "sync_full", s.stats.syncFull)
	b = kvi(b, "sync_partial_ok", s.stats.syncPartialOK)
	b = kvi(b, "sync_partial_err", s.stats.syncPartialErr)
	b = kvi(b, "expired_subkeys", s.ks.Stats.ExpiredSubkeys)
	b = kvi(b, "expired_subkeys_active", s.ks.Stats.ExpiredSubkeysActive)
	b = kvi(b, "expired_keys", s.ks.Stats.ExpiredKeys)
	b = kvi(b, "expired_keys_active", s.ks.Stats.ExpiredKeysActive)
	b = kv(b, "expired_stale_perc", strconv.FormatFloat(s.eng.ExpiredStalePercent*100, 'f', 2, 64))
	b = kvi(b, "expired_time_cap_reached_count", s.eng.ExpireCycleCapHits)
	b = kvi(b, "expire_cycle_cpu_milliseconds", s.eng.ExpireCycleTimeUs/1000)
	b = kvi(b, "evicted_keys", s.ks.Stats.EvictedKeys)
	b = kvi(b, "evicted_clients", s.stats.evictedClients.Load())
	b = kv(b, "evicted_scripts", "0")
	b = kvi(b, "hotkv_blessed_keys", int64(s.blessedKeys())) // HotKV's: keys eviction may not take (BLESS)
	exceeded, current := s.evictionExceeded()
	b = kvi(b, "total_eviction_exceeded_time", exceeded)
	b = kvi(b, "current_eviction_exceeded_time", current)
	b = kvi(b, "keyspace_hits", s.ks.Stats.KeyspaceHits)
	b = kvi(b, "keyspace_misses", s.ks.Stats.KeyspaceMisses)
	b = kvi(b, "pubsub_channels", int64(s.hub.Len(pubsub.Channel)))
	b = kvi(b, "pubsub_patterns", int64(s.hub.Len(pubsub.Pattern)))
	b = kvi(b, "pubsubshard_channels", int64(s.hub.Len(pubsub.Shard)))
	b = kvi(b, "latest_fork_usec", s.stats.latestForkUs)
	b = kvi(b, "total_forks", s.stats.forks)
	b = kvi(b, "migrate_cached_sockets", int64(len(s.migrate)))
	z("slave_expires_tracked_keys", "active_defrag_hits", "active_defrag_misses", "active_defrag_key_hits",
		"active_defrag_key_misses", "total_active_defrag_time", "current_active_defrag_time")
	_, tk, ti, tp := s.trk.Stats()
	b = kvi(b, "tracking_total_keys", int64(tk))
	b = kvi(b, "tracking_total_items", int64(ti))
	b = kvi(b, "tracking_total_prefixes", int64(tp))
	b = kvi(b, "unexpected_error_replies", s.stats.unexpectedErrors)
	b = kvi(b, "total_error_replies", s.stats.errorReplies)
	z("dump_payload_sanitizations")
	b = kvi(b, "total_reads_processed", s.net.Stats.Reads.Load())
	b = kvi(b, "total_writes_processed", s.net.Stats.Writes.Load())
	z("io_threaded_reads_processed", "io_threaded_writes_processed", "io_threaded_total_prefetch_batches",
		"io_threaded_total_prefetch_entries")
	b = kvi(b, "client_query_buffer_limit_disconnections", s.net.Stats.QueryBufLimitDisconnects.Load())
	b = kvi(b, "client_output_buffer_limit_disconnections", s.stats.obufLimitDisconnects.Load())
	z("reply_buffer_shrinks", "reply_buffer_expands")
	b = kvi(b, "eventloop_cycles", s.net.Stats.Loop.Cycles.Load())
	b = kvi(b, "eventloop_duration_sum", s.net.Stats.Loop.DurSum.Load())
	b = kvi(b, "eventloop_duration_cmd_sum", s.net.Stats.Loop.CmdSum.Load())
	b = kvi(b, "instantaneous_eventloop_cycles_per_sec", int64(s.inst.cycles.mean()))
	b = kvi(b, "instantaneous_eventloop_duration_usec", int64(s.inst.elDur.mean()))
	st := &s.acl.Stats
	b = kvi(b, "acl_access_denied_auth", st.Auth)
	b = kvi(b, "acl_access_denied_cmd", st.Cmd)
	b = kvi(b, "acl_access_denied_key", st.Key)
	b = kvi(b, "acl_access_denied_channel", st.Channel)
	b = kvi(b, "acl_access_denied_tls_cert", st.TLSCert)
	return b
}

func (s *Server) infoReplication(b []byte) []byte {
	off := s.repl.Offset()
	if s.isReplica() {
		b = kv(b, "role", "slave")
		b = s.appendReplicaInfo(b)
		off = s.rs.offset.Load()
	} else {
		b = kv(b, "role", "master")
	}
	b = s.repl.AppendInfo(b, s.clock.NowMs())
	b = kv(b, "master_failover_state", s.fo.String())
	b = kv(b, "master_replid", s.replID)
	b = kv(b, "master_replid2", s.replID2)
	b = kvi(b, "master_repl_offset", off)
	b = kvi(b, "second_repl_offset", s.secondOffset)
	active, size, first, histlen := s.repl.BacklogInfo()
	act := int64(0)
	if active {
		act = 1
	}
	b = kvi(b, "repl_backlog_active", act)
	b = kvi(b, "repl_backlog_size", size)
	b = kvi(b, "repl_backlog_first_byte_offset", first)
	b = kvi(b, "repl_backlog_histlen", histlen)
	return b
}

func (s *Server) infoCPU(b []byte) []byte {
	var ru, ruc syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ruc)
	tv := func(t syscall.Timeval) string {
		return fmt.Sprintf("%d.%06d", t.Sec, t.Usec)
	}
	b = kv(b, "used_cpu_sys", tv(ru.Stime))
	b = kv(b, "used_cpu_user", tv(ru.Utime))
	b = kv(b, "used_cpu_sys_children", tv(ruc.Stime))
	b = kv(b, "used_cpu_user_children", tv(ruc.Utime))
	// HotKV has no main thread: the process's figures stand for it
	b = kv(b, "used_cpu_sys_main_thread", tv(ru.Stime))
	b = kv(b, "used_cpu_user_main_thread", tv(ru.Utime))
	return b
}

// CommandStats appends the commandstats section body.
func (s *Server) CommandStats(b []byte) []byte { return s.infoCommandstats(b) }

func (s *Server) infoCommandstats(b []byte) []byte {
	for id := range s.cmdStats {
		st := &s.cmdStats[id]
		if st.calls == 0 && st.rejected == 0 && st.failed == 0 {
			continue
		}
		per := 0.0
		if st.calls > 0 {
			per = float64(st.usec) / float64(st.calls)
		}
		b = kv(b, "cmdstat_"+s.table.ByID(id).FullName(), fmt.Sprintf(
			"calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
			st.calls, st.usec, per, st.rejected, st.failed))
	}
	return b
}

func (s *Server) infoErrorstats(b []byte) []byte {
	codes := make([]string, 0, len(s.errStats))
	for c := range s.errStats {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		b = kv(b, "errorstat_"+c, "count="+strconv.FormatInt(s.errStats[c], 10))
	}
	return b
}

func (s *Server) infoKeyspace(b []byte) []byte {
	for _, db := range s.ks.DBs {
		if db.Len() == 0 {
			continue
		}
		b = kv(b, "db"+strconv.Itoa(db.ID), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=%d,subexpiry=%d",
			db.Len(), db.Expires(), db.AvgTTL(), db.HashesWithFieldTTL()))
	}
	return b
}

// keysizesLabels are the bins' labels (sdscatHistograms' expSizeLabels).
var keysizesLabels = func() [keyspace.KeysizesBins]string {
	var l [keyspace.KeysizesBins]string
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	l[0] = "0"
	for i := 1; i < len(l); i++ {
		p := i - 1 // the bin holds 2^p to 2^(p+1)-1
		l[i] = strconv.Itoa(1<<(p%10)) + units[p/10]
	}
	return l
}()

// keysizesFields are the INFO field names by type (KeysizesTypes' order).
var keysizesFields = [...]string{"distrib_strings_sizes", "distrib_lists_items", "distrib_sets_items",
	"distrib_zsets_items", "distrib_hashes_items"}

// infoKeysizes is INFO keysizes (Redis 8): per database with keys, per type
// with keys, "db<n>_<field>:<bin>=<count>,..." over the non-empty bins.
func (s *Server) infoKeysizes(b []byte) []byte {
	for _, db := range s.ks.DBs {
		if db.Len() == 0 {
			continue
		}
		h := db.Keysizes()
		for t := range h {
			start := len(b)
			b = append(b, "db"...)
			b = strconv.AppendInt(b, int64(db.ID), 10)
			b = append(b, '_')
			b = append(b, keysizesFields[t]...)
			b = append(b, ':')
			n := 0
			for i, c := range h[t] {
				if c == 0 {
					continue
				}
				if n > 0 {
					b = append(b, ',')
				}
				b = append(b, keysizesLabels[i]...)
				b = append(b, '=')
				b = strconv.AppendInt(b, c, 10)
				n++
			}
			if n == 0 {
				b = b[:start]
				continue
			}
			b = append(b, '\r', '\n')
		}
	}
	return b
}

// RedisVersion is the Redis release whose semantics HotKV follows.
const RedisVersion = command.Version

// infoDebug is INFO debug (only when asked for by name).
func (s *Server) infoDebug(b []byte) []byte {
	b = kv(b, "eventloop_duration_aof_sum", "0")
	b = kvi(b, "eventloop_duration_cron_sum", s.cronSum.Load())
	b = kvi(b, "eventloop_duration_max", s.net.Stats.Loop.DurMax.Load())
	b = kvi(b, "eventloop_cmd_per_cycle_max", s.net.Stats.Loop.CmdPerCycleMax.Load())
	return b
}

// appendListeners appends INFO's listener lines as Redis: listener<i> where
// i is the connection type (0 TCP with every configured bind address, 1 the
// Unix socket, 2 TLS), whichever exist.
func appendListeners(b []byte, lns, tlsLns []net.Listener, bind string) []byte {
	tcpPort := ""
	for _, ln := range lns {
		if ta, ok := ln.Addr().(*net.TCPAddr); ok {
			tcpPort = strconv.Itoa(ta.Port)
		}
	}
	if tcpPort != "" {
		line := "name=tcp"
		for _, a := range strings.Fields(bind) {
			line += ",bind=" + a
		}
		b = kv(b, "listener0", line+",port="+tcpPort)
	}
	for _, ln := range lns {
		if ua, ok := ln.Addr().(*net.UnixAddr); ok {
			b = kv(b, "listener1", "name=unix,bind="+ua.Name)
		}
	}
	if len(tlsLns) > 0 {
		line := "name=tls"
		for _, a := range strings.Fields(bind) {
			line += ",bind=" + a
		}
		b = kv(b, "listener2", line+",port="+strconv.Itoa(tlsLns[0].Addr().(*net.TCPAddr).Port))
	}
	return b
}

// infoLocks is INFO locks, HotKV's own section (not in the default set): the
// lock view's counters (internal/locks) and its hold and wait times in µs.
func (s *Server) infoLocks(b []byte) []byte {
	t := s.locks
	b = kvi(b, "locks_held", int64(t.Len()))
	b = kvi(b, "locks_acquired", t.C.Acquired)
	b = kvi(b, "locks_contended", t.C.Contended)
	b = kvi(b, "locks_released", t.C.Released)
	b = kvi(b, "locks_released_stale", t.C.Stale)
	b = kvi(b, "locks_extended", t.C.Extended)
	b = kvi(b, "locks_expired_while_held", t.C.ExpiredHeld)
	b = kvi(b, "locks_removed", t.C.Removed)
	b = kvi(b, "locks_keys_tracked", int64(t.Keys()))
	b = appendLockHist(b, "lock_hold_usec", &t.Hold)
	wait := t.Wait()
	return appendLockHist(b, "lock_wait_usec", &wait)
}

func appendLockHist(b []byte, name string, h *locks.Histogram) []byte {
	b = append(b, name...)
	b = append(b, ":count="...)
	b = strconv.AppendInt(b, h.Count, 10)
	b = append(b, ",sum="...)
	b = strconv.AppendInt(b, h.SumUs, 10)
	for _, q := range [...]struct {
		name string
		q    float64
	}{{"p50", 0.5}, {"p99", 0.99}, {"p99.9", 0.999}} {
		b = append(b, ',')
		b = append(b, q.name...)
		b = append(b, '=')
		b = strconv.AppendInt(b, int64(h.Quantile(q.q)), 10)
	}
	return append(b, "\r\n"...)
}
