package metrics

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Collector exports a Snapshot taken at each scrape. It is an unchecked
// collector (Describe sends nothing): the metrics present depend on what the
// server reports, as INFO's fields do.
type Collector struct {
	src func() *Snapshot
}

// NewCollector returns a collector that calls src at each scrape.
func NewCollector(src func() *Snapshot) *Collector { return &Collector{src: src} }

// Describe implements prometheus.Collector (unchecked).
func (*Collector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range samples(c.src()) {
		if pm, err := m.metric(); err == nil {
			ch <- pm
		}
	}
}

// samples turns a snapshot into the scrape's series; pure, no Prometheus
// types until sample.metric.
func samples(s *Snapshot) []sample {
	e := &emitter{seen: map[string]bool{}}
	e.gauge("redis_up", "Information about the Redis instance", 1)
	e.config(s.Config)
	e.info(s)
	e.latency(s)
	e.slowlog(s)
	e.locks(&s.Locks)
	return e.out
}

// sample is one series of a scrape: a gauge or counter value, or a summary's
// or histogram's count, sum and quantiles or cumulative buckets.
type sample struct {
	name, help string
	counter    bool
	value      float64
	labels     []string
	values     []string
	summary    map[float64]float64 // quantile → value, when a summary
	buckets    map[float64]uint64  // upper bound → cumulative count, when a histogram
	count      uint64
	sum        float64
}

func (m *sample) metric() (prometheus.Metric, error) {
	d := prometheus.NewDesc(m.name, m.help, m.labels, nil)
	switch {
	case m.summary != nil:
		return prometheus.NewConstSummary(d, m.count, m.sum, m.summary, m.values...)
	case m.buckets != nil:
		return prometheus.NewConstHistogram(d, m.count, m.sum, m.buckets, m.values...)
	case m.counter:
		return prometheus.NewConstMetric(d, prometheus.CounterValue, m.value, m.values...)
	}
	return prometheus.NewConstMetric(d, prometheus.GaugeValue, m.value, m.values...)
}

// emitter collects a scrape's samples. A series is kept once (the first
// wins: INFO text with a repeated field must not fail the scrape); one that
// cannot be exported (a label value that is not UTF-8: a binary key name)
// is dropped by Collect.
type emitter struct {
	out  []sample
	seen map[string]bool
}

// first reports whether name with these label values is new to the scrape.
func (e *emitter) first(name string, values []string) bool {
	id := name + "\x00" + strings.Join(values, "\x00")
	if e.seen[id] {
		return false
	}
	e.seen[id] = true
	return true
}

func (e *emitter) metric(name, help string, t prometheus.ValueType, v float64, labels []string, values ...string) {
	if e.first(name, values) {
		e.out = append(e.out, sample{name: name, help: help, counter: t == prometheus.CounterValue, value: v, labels: labels, values: values})
	}
}

func (e *emitter) gauge(name, help string, v float64) {
	e.metric(name, help, prometheus.GaugeValue, v, nil)
}

func (e *emitter) counter(name, help string, v float64) {
	e.metric(name, help, prometheus.CounterValue, v, nil)
}

// config is redis_exporter's extractConfigMetrics (without its opt-in
// config_key_value).
func (e *emitter) config(cfg map[string]string) {
	for _, k := range []string{"io-threads", "maxclients", "maxmemory", "repl-backlog-size"} {
		if v, err := strconv.ParseFloat(cfg[k], 64); err == nil {
			e.gauge("redis_config_"+strings.ReplaceAll(k, "-", "_"), "redis_config_"+strings.ReplaceAll(k, "-", "_"), v)
		}
	}
	f := strings.Split(cfg["client-output-buffer-limit"], " ")
	lbl := []string{"class", "limit"}
	for i := 0; i+3 < len(f); i += 4 {
		if v, err := strconv.ParseFloat(f[i+1], 64); err == nil {
			e.metric("redis_config_client_output_buffer_limit_bytes", "The configured buffer limits per class", prometheus.GaugeValue, v, lbl, f[i], "hard")
		}
		if v, err := strconv.ParseFloat(f[i+2], 64); err == nil {
			e.metric("redis_config_client_output_buffer_limit_bytes", "The configured buffer limits per class", prometheus.GaugeValue, v, lbl, f[i], "soft")
		}
		if v, err := strconv.ParseFloat(f[i+3], 64); err == nil {
			e.metric("redis_config_client_output_buffer_limit_overcome_seconds", "How long for buffer limits per class to be exceeded before replicas are dropped", prometheus.GaugeValue, v, lbl, f[i], "soft")
		}
	}
}

var reSlave = regexp.MustCompile(`^slave\d+`)

// info is redis_exporter's extractInfoMetrics for a master: each INFO field
// its maps name, the Server section's specials, commandstats, latencystats
// (a summary with commandstats' count and sum), errorstats, the keyspace,
// connected replicas and instance_info.
func (e *emitter) info(s *Snapshot) {
	kv := map[string]string{}
	type cmdStat struct {
		calls uint64
		usec  float64
	}
	stats := map[string]cmdStat{}
	pct := map[string]map[float64]float64{}
	var pctOrder []string
	section := ""
	for _, line := range strings.Split(s.Info, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "# ") {
			section = line[2:]
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		if len(line) < 2 || !ok {
			continue
		}
		kv[key] = val
		switch section {
		case "Replication":
			if e.replica(key, val) {
				continue
			}
		case "Server":
			switch key {
			case "uptime_in_seconds":
				if up, err := strconv.ParseFloat(val, 64); err == nil {
					e.gauge("redis_start_time_seconds", "Start time of the Redis instance since unix epoch in seconds.", float64(s.NowMs/1000)-up)
				}
			case "configured_hz", "hz":
				if hz, err := strconv.ParseInt(val, 10, 64); err == nil {
					e.gauge("redis_"+key, "redis_"+key, float64(hz))
				}
			}
		case "Commandstats":
			cmd, calls, usec, rejected, failed, ok := parseCmdStat(key, val)
			if !ok {
				continue
			}
			lbl := []string{"cmd"}
			e.metric("redis_commands_total", "Total number of calls per command", prometheus.CounterValue, calls, lbl, cmd)
			e.metric("redis_commands_duration_seconds_total", "Total amount of time in seconds spent per command", prometheus.CounterValue, usec/1e6, lbl, cmd)
			e.metric("redis_commands_rejected_calls_total", "Total number of errors prior command execution per command", prometheus.CounterValue, rejected, lbl, cmd)
			e.metric("redis_commands_failed_calls_total", "Total number of errors within command execution per command", prometheus.CounterValue, failed, lbl, cmd)
			stats[cmd] = cmdStat{uint64(calls), usec}
			continue
		case "Latencystats":
			cmd, ok := strings.CutPrefix(key, "latency_percentiles_usec_")
			if !ok {
				continue
			}
			m := map[float64]float64{}
			for _, p := range strings.Split(val, ",") {
				k, v, _ := strings.Cut(p, "=")
				if len(k) < 2 {
					m = nil
					break
				}
				q, err1 := strconv.ParseFloat(k[1:], 64)
				x, err2 := strconv.ParseFloat(v, 64)
				if err1 != nil || err2 != nil {
					m = nil
					break
				}
				m[q] = x
			}
			if m != nil {
				pct[cmd] = m
				pctOrder = append(pctOrder, cmd)
			}
			continue
		case "Errorstats":
			if typ, ok := strings.CutPrefix(key, "errorstat_"); ok {
				if n, ok := fieldVal(val); ok {
					e.metric("redis_errors_total", "Total number of errors per error type", prometheus.CounterValue, n, []string{"err"}, typ)
				}
			}
			continue
		case "Keyspace":
			if keys, expiring, ttl, cached, ok := parseKeyspace(key, val); ok {
				lbl := []string{"db"}
				e.metric("redis_db_keys", "Total number of keys by DB", prometheus.GaugeValue, keys, lbl, key)
				e.metric("redis_db_keys_expiring", "Total number of expiring keys by DB", prometheus.GaugeValue, expiring, lbl, key)
				if cached > -1 {
					e.metric("redis_db_keys_cached", "Total number of cached keys by DB", prometheus.GaugeValue, cached, lbl, key)
				}
				if ttl > -1 {
					e.metric("redis_db_avg_ttl_seconds", "Avg TTL in seconds", prometheus.GaugeValue, ttl, lbl, key)
				}
				continue
			}
		}
		e.field(key, val)
	}
	for _, cmd := range pctOrder {
		if st, ok := stats[cmd]; ok {
			if e.first("redis_latency_percentiles_usec", []string{cmd}) {
				e.out = append(e.out, sample{name: "redis_latency_percentiles_usec", help: "A summary of latency percentile distribution per command",
					labels: []string{"cmd"}, values: []string{cmd}, summary: pct[cmd], count: st.calls, sum: st.usec})
			}
		}
	}
	lbls := []string{"role", "redis_version", "redis_build_id", "redis_mode", "os", "maxmemory_policy", "tcp_port", "run_id", "process_id", "master_replid"}
	vals := make([]string, len(lbls))
	for i, l := range lbls {
		vals[i] = kv[l]
	}
	e.metric("redis_instance_info", "Information about the Redis instance", prometheus.GaugeValue, 1, lbls, vals...)
}

// field exports one INFO field when the maps name it (parseAndRegisterConstMetric).
func (e *emitter) field(key, val string) {
	if !(strings.HasPrefix(key, "db") || strings.HasPrefix(key, "cmdstat_") || strings.HasPrefix(key, "cluster_")) &&
		gauges[key] == "" && counters[key] == "" {
		return
	}
	name, t := key, prometheus.GaugeValue
	if n, ok := gauges[key]; ok {
		name = n
	} else if n, ok := counters[key]; ok {
		name, t = n, prometheus.CounterValue
	}
	var v float64
	switch val {
	case "ok", "true":
		v = 1
	case "err", "fail", "false":
		v = 0
	default:
		var err error
		if v, err = strconv.ParseFloat(val, 64); err != nil {
			return
		}
	}
	if name == "latest_fork_usec" {
		name, v = "latest_fork_seconds", v/1e6
	}
	e.metric("redis_"+name, "redis_"+name, t, v, nil)
}

// replica exports a master's connected replica lines (slaveN:ip=...).
func (e *emitter) replica(key, val string) bool {
	if !reSlave.MatchString(key) {
		return false
	}
	f := map[string]string{}
	for _, p := range strings.Split(val, ",") {
		if k, v, ok := strings.Cut(p, "="); ok {
			f[k] = v
		}
	}
	off, err := strconv.ParseFloat(f["offset"], 64)
	if err != nil {
		return false
	}
	lbl := []string{"slave_ip", "slave_port", "slave_state"}
	e.metric("redis_connected_slave_offset_bytes", "Offset of connected slave", prometheus.GaugeValue, off, lbl, f["ip"], f["port"], f["state"])
	if lag, err := strconv.ParseFloat(f["lag"], 64); err == nil {
		e.metric("redis_connected_slave_lag_seconds", "Lag of connected slave", prometheus.GaugeValue, lag, lbl, f["ip"], f["port"], f["state"])
	}
	return true
}

func fieldVal(s string) (float64, bool) {
	_, v, ok := strings.Cut(s, "=")
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// parseCmdStat reads cmdstat_<cmd>:calls=..,usec=..,usec_per_call=..,rejected_calls=..,failed_calls=..
func parseCmdStat(key, val string) (cmd string, calls, usec, rejected, failed float64, ok bool) {
	cmd, ok = strings.CutPrefix(key, "cmdstat_")
	f := strings.Split(val, ",")
	if !ok || len(f) < 5 {
		return "", 0, 0, 0, 0, false
	}
	var ok1, ok2, ok3, ok4 bool
	calls, ok1 = fieldVal(f[0])
	usec, ok2 = fieldVal(f[1])
	rejected, ok3 = fieldVal(f[3])
	failed, ok4 = fieldVal(f[4])
	return cmd, calls, usec, rejected, failed, ok1 && ok2 && ok3 && ok4
}

// parseKeyspace reads db<n>:keys=..,expires=..,avg_ttl=..[,x=..]: ttl in
// seconds, -1 when absent; cached is the fourth field's value, -1 when
// absent (redis_exporter reads KeyDB's cached_keys there; on Redis 8 it is
// subexpiry, and exported as db_keys_cached all the same).
func parseKeyspace(key, val string) (keys, expiring, ttl, cached float64, ok bool) {
	if !strings.HasPrefix(key, "db") {
		return 0, 0, 0, 0, false
	}
	f := strings.Split(val, ",")
	if len(f) < 2 {
		return 0, 0, 0, 0, false
	}
	var ok1, ok2 bool
	keys, ok1 = fieldVal(f[0])
	expiring, ok2 = fieldVal(f[1])
	ttl, cached = -1, -1
	if len(f) > 2 {
		t, ok3 := fieldVal(f[2])
		if !ok3 {
			return 0, 0, 0, 0, false
		}
		ttl = t / 1000
	}
	if len(f) > 3 {
		c, ok4 := fieldVal(f[3])
		if !ok4 {
			return 0, 0, 0, 0, false
		}
		cached = c
	}
	return keys, expiring, ttl, cached, ok1 && ok2
}

// latency is LATENCY LATEST's spikes and LATENCY HISTOGRAM's histograms
// (extractLatencyMetrics).
func (e *emitter) latency(s *Snapshot) {
	lbl := []string{"event_name"}
	for _, l := range s.Latency {
		e.metric("redis_latency_spike_last", "When the latency spike last occurred", prometheus.GaugeValue, float64(l.Time), lbl, l.Name)
		e.metric("redis_latency_spike_duration_seconds", "Length of the last latency spike in seconds", prometheus.GaugeValue, float64(l.LastMs)/1e3, lbl, l.Name)
	}
	for _, h := range s.Histograms {
		buckets := make(map[float64]uint64, len(h.CDF))
		for _, b := range h.CDF {
			buckets[float64(b[0])] = uint64(b[1])
		}
		if e.first("redis_commands_latencies_usec", []string{h.Cmd}) {
			e.out = append(e.out, sample{name: "redis_commands_latencies_usec", help: "A histogram of latencies per command",
				labels: []string{"cmd"}, values: []string{h.Cmd}, buckets: buckets, count: uint64(h.Calls), sum: totalUsec(s.Info, h.Cmd)})
		}
	}
}

// totalUsec is the usec of cmd and its subcommands in INFO commandstats.
func totalUsec(info, cmd string) float64 {
	var total float64
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isStat := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isStat || (name != cmd && !strings.HasPrefix(name, cmd+"|")) {
			continue
		}
		if f := strings.Split(rest, ","); len(f) > 1 {
			if v, ok := fieldVal(f[1]); ok {
				total += v
			}
		}
	}
	return total
}

// slowlog is SLOWLOG LEN and the newest entry (extractSlowLogMetrics).
func (e *emitter) slowlog(s *Snapshot) {
	e.gauge("redis_slowlog_length", "Total slowlog", float64(s.SlowLen))
	var id, dur float64
	if len(s.Slow) > 0 {
		id, dur = float64(s.Slow[0].ID), float64(s.Slow[0].DurUs)/1e6
	}
	e.gauge("redis_slowlog_last_id", "Last id of slowlog", id)
	e.gauge("redis_last_slow_execution_duration_seconds", "The amount of time needed for last slow execution, in seconds", dur)
}

// locks is the lock view: HotKV's own metrics.
func (e *emitter) locks(l *LockView) {
	e.gauge("hotkv_locks_held", "Locks held now (keys taken with SET NX and an expiry)", float64(l.Held))
	for _, c := range []struct {
		name, help string
		v          int64
	}{
		{"acquired", "Locks taken", l.C.Acquired},
		{"contended", "Attempts refused because the lock was held", l.C.Contended},
		{"released", "Locks released by their holder", l.C.Released},
		{"released_stale", "Token releases that did not match: the holder had lost the lock", l.C.Stale},
		{"extended", "Expiry changes of held locks", l.C.Extended},
		{"expired_while_held", "Locks that expired before their holder released them", l.C.ExpiredHeld},
		{"removed", "Held locks deleted otherwise (DEL, overwritten, flushed, evicted)", l.C.Removed},
	} {
		e.counter("hotkv_locks_"+c.name+"_total", c.help, float64(c.v))
	}
	e.hist("hotkv_lock_hold_seconds", "How long holders held their locks (acquisition to release)", &l.Hold)
	e.hist("hotkv_lock_wait_seconds", "How long acquisitions waited (the first refused attempt since the lock was last taken to the acquisition)", &l.Wait)
	lbl := []string{"db", "key"}
	for _, k := range l.Top {
		db := strconv.Itoa(k.DB)
		for _, c := range []struct {
			name string
			v    int64
		}{
			{"acquired", k.Acquired}, {"contended", k.Contended}, {"released_stale", k.Stale}, {"expired_while_held", k.ExpiredHeld},
		} {
			e.metric("hotkv_lock_key_"+c.name+"_total", "Per lock key (the most active): "+c.name, prometheus.CounterValue, float64(c.v), lbl, db, k.Key)
		}
	}
}

func (e *emitter) hist(name, help string, h *locksHistogram) {
	buckets := make(map[float64]uint64, len(h.Counts))
	var cum uint64
	for i, b := range boundsUs {
		cum += uint64(h.Counts[i])
		buckets[float64(b)/1e6] = cum
	}
	if e.first(name, nil) {
		e.out = append(e.out, sample{name: name, help: help, buckets: buckets, count: uint64(h.Count), sum: float64(h.SumUs) / 1e6})
	}
}
