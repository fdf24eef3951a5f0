package persist

import (
	"strconv"

	"github.com/hotkv/hotkv/internal/server/infofmt"
)

// AppendInfo appends INFO persistence in Redis 8's field order; the fork
// (copy-on-write) fields are 0 (no fork); aof appends the AOF's fields.
func (r *RDB) AppendInfo(b []byte, aof func([]byte) []byte) []byte {
	kv, kvi := infofmt.KV, infofmt.KVI
	flag := func(on bool) string {
		if on {
			return "1"
		}
		return "0"
	}
	b = kv(b, "loading", flag(r.loading.Load()))
	b = kv(b, "async_loading", flag(r.asyncLoading.Load()))
	b = append(b, noFork...)
	b = kvi(b, "rdb_changes_since_last_save", *r.d.Dirty)
	inProgress, cur := "0", int64(-1)
	if r.bg != nil {
		inProgress, cur = "1", r.nowUnix()-r.bg.startUnix
	} else if r.replSnaps > 0 {
		inProgress, cur = "1", r.nowUnix()-r.replSnapsSince
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
	b = kvi(b, "rdb_saves_consecutive_failures", r.failures)
	b = kv(b, "rdb_last_cow_size", "0")
	b = kvi(b, "rdb_last_load_keys_expired", r.expiredKeys)
	b = kvi(b, "rdb_last_load_keys_loaded", r.loadedKeys)
	b = aof(b)
	if r.loading.Load() {
		b = r.appendLoading(b)
	}
	return b
}

// appendLoading appends the loading_* fields INFO persistence has while the
// startup load runs, as Redis computes them.
func (r *RDB) appendLoading(b []byte) []byte {
	kv, kvi := infofmt.KV, infofmt.KVI
	start, total, loaded := r.progress.start.Load(), r.progress.total.Load(), r.progress.loaded.Load()
	perc, remaining := 0.0, int64(1)
	if total > 0 {
		perc = float64(loaded) / float64(total) * 100
		remaining = total - loaded
	}
	elapsed := r.nowUnix() - start
	eta := int64(1)
	if elapsed > 0 {
		eta = elapsed * remaining / (loaded + 1)
	}
	b = kvi(b, "loading_start_time", start)
	b = kvi(b, "loading_total_bytes", total)
	b = kv(b, "loading_rdb_used_mem", "0")
	b = kvi(b, "loading_loaded_bytes", loaded)
	b = kv(b, "loading_loaded_perc", strconv.FormatFloat(perc, 'f', 2, 64))
	return kvi(b, "loading_eta_seconds", eta)
}

// noFork are INFO persistence's copy-on-write fields: HotKV does not fork.
const noFork = "current_cow_peak:0\r\ncurrent_cow_size:0\r\ncurrent_cow_size_age:0\r\n" +
	"current_fork_perc:0.00\r\ncurrent_save_keys_processed:0\r\ncurrent_save_keys_total:0\r\n"
