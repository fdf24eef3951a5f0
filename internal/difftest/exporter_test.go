package difftest

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// startRedisTCP runs the reference redis-server on a TCP port until the test
// ends and returns its address.
func startRedisTCP(t *testing.T) string {
	t.Helper()
	bin := hotkvtest.RedisRefOrSkip(t)
	dir := t.TempDir()
	port := hotkvtest.FreePort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--enable-debug-command", "yes", "--loglevel", "warning", "--logfile", filepath.Join(dir, "log"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ { // a plain connection: no command the counters would see
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			break
		}
		if i > 200 {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(25 * time.Millisecond)
	}
	return addr
}

// exporterScrape runs redis_exporter against addr, scrapes it once and stops it.
func exporterScrape(t *testing.T, bin, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	port := hotkvtest.FreePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--redis.addr=redis://"+addr, fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--log-level=error")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	var body string
	for i := 0; ; i++ {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		if i > 200 {
			t.Fatalf("redis_exporter did not serve: %v\n%s", err, out)
		}
		time.Sleep(25 * time.Millisecond)
	}
	return parseMetrics(t, body)
}

func parseMetrics(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// serverMetrics are the families about the server: not the exporter's own,
// nor a Go process's.
func serverMetrics(mfs map[string]*dto.MetricFamily) []string {
	var names []string
	for n := range mfs {
		if strings.HasPrefix(n, "redis_exporter_") || strings.HasPrefix(n, "go_") ||
			strings.HasPrefix(n, "process_") || strings.HasPrefix(n, "promhttp_") {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// series is each sample of mfs's family name as "labels value".
func series(mfs map[string]*dto.MetricFamily, name string) map[string]float64 {
	out := map[string]float64{}
	mf := mfs[name]
	if mf == nil {
		return out
	}
	for _, m := range mf.Metric {
		var lbl []string
		for _, l := range m.Label {
			lbl = append(lbl, l.GetName()+"="+l.GetValue())
		}
		var v float64
		switch {
		case m.Counter != nil:
			v = m.Counter.GetValue()
		case m.Gauge != nil:
			v = m.Gauge.GetValue()
		case m.Histogram != nil:
			v = float64(m.Histogram.GetSampleCount())
		case m.Summary != nil:
			v = float64(m.Summary.GetSampleCount())
		}
		out[strings.Join(lbl, ",")] = v
	}
	return out
}

func diffNames(a, b []string) (onlyA, onlyB []string) {
	in := func(s []string, x string) bool { i := sort.SearchStrings(s, x); return i < len(s) && s[i] == x }
	for _, x := range a {
		if !in(b, x) {
			onlyA = append(onlyA, x)
		}
	}
	for _, x := range b {
		if !in(a, x) {
			onlyB = append(onlyB, x)
		}
	}
	return
}

// exporterWorkload is the same for both servers: strings, counters, a hash,
// a list, a sorted set, a stream, locks taken, refused and released, an
// expiry, errors, a script, a slow command and a latency spike.
func exporterWorkload(t *testing.T, addr string) {
	t.Helper()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	must := func(err error) {
		t.Helper()
		if err != nil && err != redis.Nil && !strings.HasPrefix(err.Error(), "WRONGTYPE") && !strings.HasPrefix(err.Error(), "ERR unknown command") {
			t.Fatal(err)
		}
	}
	must(c.ConfigSet(ctx, "slowlog-log-slower-than", "40000").Err()) // 40 ms: no ordinary command under -race on a loaded machine
	must(c.ConfigSet(ctx, "latency-monitor-threshold", "40").Err())
	for i := 0; i < 20; i++ {
		must(c.Set(ctx, fmt.Sprint("k", i), i, 0).Err())
		must(c.Get(ctx, fmt.Sprint("k", i*2)).Err())
		must(c.Incr(ctx, "counter").Err())
	}
	must(c.HSet(ctx, "h", "f", "v").Err())
	must(c.LPush(ctx, "l", 1, 2, 3).Err())
	must(c.ZAdd(ctx, "z", redis.Z{Score: 1, Member: "a"}).Err())
	must(c.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Err())
	must(c.SetNX(ctx, "lock:a", "tok", time.Minute).Err())
	must(c.SetNX(ctx, "lock:a", "other", time.Minute).Err())
	must(c.Do(ctx, "DELEX", "lock:a", "IFEQ", "tok").Err())
	must(c.Expire(ctx, "k1", time.Hour).Err())
	must(c.Set(ctx, "gone", "v", time.Millisecond).Err())
	time.Sleep(20 * time.Millisecond)
	must(c.Get(ctx, "gone").Err())
	must(c.LPush(ctx, "k2", "x").Err()) // WRONGTYPE
	must(c.Do(ctx, "NOSUCHCOMMAND").Err())
	must(c.Eval(ctx, "return redis.call('GET', KEYS[1])", []string{"k3"}).Err())
	must(c.Do(ctx, "DEBUG", "SLEEP", "0.05").Err()) // a slow log entry and a latency spike
	// no more entries: the exporter's own commands (INFO ALL under -race
	// on a loaded machine) may take 10 ms, Redis's default threshold
	must(c.ConfigSet(ctx, "slowlog-log-slower-than", "-1").Err())
	must(c.ConfigSet(ctx, "latency-monitor-threshold", "0").Err())
}

// The real redis_exporter scraping HotKV and redis-server 8.6.3 after the same
// workload: the same metric names, the same label sets for the per-command,
// per-error and per-database series, and the same figures for what the
// workload decides (commands, keys, hits, errors, the slow log). Then HotKV's
// own /metrics against the exporter's view of HotKV: every name the exporter
// exports is there, with the same figures.
func TestRedisExporterSameMetrics(t *testing.T) {
	bin := hotkvtest.RedisExporterOrSkip(t)
	raddr := startRedisTCP(t)
	mport := hotkvtest.FreePort(t)
	hk := hotkvtest.Start(t, hotkvtest.WithConfig("metrics-port", strconv.Itoa(mport)))
	exporterWorkload(t, raddr)
	exporterWorkload(t, hk.Addr)

	rd := exporterScrape(t, bin, raddr)
	hv := exporterScrape(t, bin, hk.Addr)
	onlyRedis, onlyHotKV := diffNames(serverMetrics(rd), serverMetrics(hv))
	if len(onlyRedis) > 0 || len(onlyHotKV) > 0 {
		t.Errorf("redis_exporter's metric names differ:\n only for Redis: %v\n only for HotKV: %v", onlyRedis, onlyHotKV)
	}
	for _, name := range []string{"redis_commands_total", "redis_commands_failed_calls_total", "redis_commands_rejected_calls_total",
		"redis_errors_total", "redis_db_keys", "redis_db_keys_expiring", "redis_keyspace_hits_total", "redis_keyspace_misses_total",
		"redis_expired_keys_total", "redis_evicted_keys_total", "redis_slowlog_length", "redis_blocked_clients",
		"redis_pubsub_channels", "redis_connected_slaves", "redis_config_maxclients", "redis_config_maxmemory",
		"redis_latency_spike_duration_seconds", "redis_commands_latencies_usec"} {
		a, b := series(rd, name), series(hv, name)
		var keysA, keysB []string
		for k := range a {
			keysA = append(keysA, k)
		}
		for k := range b {
			keysB = append(keysB, k)
		}
		sort.Strings(keysA)
		sort.Strings(keysB)
		if strings.Join(keysA, " ") != strings.Join(keysB, " ") {
			t.Errorf("%s: labels differ:\n redis %v\n hotkv %v", name, keysA, keysB)
			continue
		}
		if name == "redis_latency_spike_duration_seconds" {
			continue // the spike's length is the machine's
		}
		for k, v := range a {
			if b[k] != v {
				t.Errorf("%s{%s}: redis %v, hotkv %v", name, k, v, b[k])
			}
		}
	}

	// HotKV's own /metrics: a superset of the exporter's names, same figures
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", mport))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	own := parseMetrics(t, string(body))
	var missing []string
	for _, n := range func() []string { m, _ := diffNames(serverMetrics(hv), serverMetrics(own)); return m }() {
		// about the exporter's own work, though named redis_
		if n != "redis_target_scrape_request_errors_total" && n != "redis_last_key_groups_scrape_duration_milliseconds" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		t.Errorf("HotKV's /metrics lacks what redis_exporter exports: %v", missing)
	}
	// (the exporter's own scrape ran commands since, some failing: the
	// figures compared are those it cannot change)
	for _, name := range []string{"redis_db_keys", "redis_db_keys_expiring", "redis_db_keys_cached", "redis_keyspace_hits_total",
		"redis_keyspace_misses_total", "redis_expired_keys_total", "redis_slowlog_length", "redis_config_maxmemory",
		"redis_config_maxclients", "redis_latency_spike_last"} {
		a, b := series(hv, name), series(own, name)
		for k, v := range a {
			if b[k] != v {
				t.Errorf("%s{%s}: redis_exporter %v, HotKV's /metrics %v", name, k, v, b[k])
			}
		}
	}
	for _, m := range own["redis_commands_total"].GetMetric() {
		if m.Label[0].GetValue() == "set" && m.Counter.GetValue() != series(hv, "redis_commands_total")["cmd=set"] {
			t.Errorf("commands_total{cmd=set}: HotKV's %v, redis_exporter's %v", m.Counter.GetValue(), series(hv, "redis_commands_total")["cmd=set"])
		}
	}
}
