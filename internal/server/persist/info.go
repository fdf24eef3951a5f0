package persist

import "github.com/hotkv/hotkv/internal/server/infofmt"

// AppendInfo appends INFO persistence in Redis 8's field order; the fork
// (copy-on-write) and AOF fields are 0 (no fork, no AOF).
func (r *RDB) AppendInfo(b []byte) []byte {
	kv, kvi := infofmt.KV, infofmt.KVI
	loading := "0"
	if r.loading.Load() {
		loading = "1"
	}
	b = kv(b, "loading", loading)
	b = kv(b, "async_loading", "0")
	b = kv(b, "current_cow_peak", "0")
	b = kv(b, "current_cow_size", "0")
	b = kv(b, "current_cow_size_age", "0")
	b = kv(b, "current_fork_perc", "0.00")
	b = kv(b, "current_save_keys_processed", "0")
	b = kv(b, "current_save_keys_total", "0")
	b = kvi(b, "rdb_changes_since_last_save", *r.d.Dirty)
	inProgress, cur := "0", int64(-1)
	if r.bg != nil {
		inProgress, cur = "1", r.nowUnix()-r.bg.startUnix
	}
	b = kv(b, "rdb_bgsave_in_progress", inProgress)
	b = kvi(b, "rdb_last_save_time", r.lastSave)
	status := "ok"
	if r.lastErr {
		status = "err"
	}
	b = kv(b, "rdb_last_bgsave_status", status)
	b = kvi(b, "rdb_last_bgsave_time_sec", r.lastBgTime)
	b = kvi(b, "rdb_current_bgsave_time_sec", cur)
	b = kvi(b, "rdb_saves", r.saves)
	b = kv(b, "rdb_last_cow_size", "0")
	b = kvi(b, "rdb_last_load_keys_expired", r.expiredKeys)
	b = kvi(b, "rdb_last_load_keys_loaded", r.loadedKeys)
	b = kv(b, "aof_enabled", "0")
	b = kv(b, "aof_rewrite_in_progress", "0")
	b = kv(b, "aof_rewrite_scheduled", "0")
	b = kv(b, "aof_last_rewrite_time_sec", "-1")
	b = kv(b, "aof_current_rewrite_time_sec", "-1")
	b = kv(b, "aof_last_bgrewrite_status", "ok")
	b = kv(b, "aof_rewrites", "0")
	b = kv(b, "aof_rewrites_consecutive_failures", "0")
	b = kv(b, "aof_last_write_status", "ok")
	b = kv(b, "aof_last_cow_size", "0")
	b = kv(b, "module_fork_in_progress", "0")
	b = kv(b, "module_fork_last_cow_size", "0")
	return b
}
