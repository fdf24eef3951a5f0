package aof

import (
	"time"

	"github.com/hotkv/hotkv/internal/server/infofmt"
)

// AppendInfo appends INFO persistence's AOF fields in Redis 8's order: the
// rewrite's and the write status always, the sizes and buffers while the
// AOF is on. Engine lock.
func (a *AOF) AppendInfo(b []byte) []byte {
	kv, kvi := infofmt.KV, infofmt.KVI
	b = kv(b, "aof_enabled", boolStr(a.state != Off))
	b = kv(b, "aof_rewrite_in_progress", boolStr(a.rw != nil))
	b = kv(b, "aof_rewrite_scheduled", boolStr(a.scheduled))
	b = kvi(b, "aof_last_rewrite_time_sec", a.lastRwSec)
	cur := int64(-1)
	if a.rw != nil {
		cur = time.Now().Unix() - a.rw.startUnix
	}
	b = kvi(b, "aof_current_rewrite_time_sec", cur)
	status := "ok"
	if a.lastRwErr {
		status = "err"
	}
	b = kv(b, "aof_last_bgrewrite_status", status)
	b = kvi(b, "aof_rewrites", a.rewrites)
	b = kvi(b, "aof_rewrites_consecutive_failures", a.failures)
	ws := "ok"
	if a.writeErr.Load() != nil {
		ws = "err"
	}
	b = kv(b, "aof_last_write_status", ws)
	b = kv(b, "aof_last_cow_size", "0")
	b = kv(b, "module_fork_in_progress", "0")
	b = kv(b, "module_fork_last_cow_size", "0")
	if a.state == Off {
		return b
	}
	b = kvi(b, "aof_current_size", a.curSize.Load())
	b = kvi(b, "aof_base_size", a.baseSize)
	b = kv(b, "aof_pending_rewrite", boolStr(a.scheduled))
	a.mu.Lock()
	pending := len(a.pend)
	a.mu.Unlock()
	b = kvi(b, "aof_buffer_length", int64(pending))
	b = kv(b, "aof_pending_bio_fsync", boolStr(a.fsyncing.Load()))
	return kvi(b, "aof_delayed_fsync", a.delayed.Load())
}

func boolStr(on bool) string {
	if on {
		return "1"
	}
	return "0"
}
