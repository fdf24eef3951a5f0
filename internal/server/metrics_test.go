package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
	"github.com/hotkv/hotkv/internal/metrics"
)

// startWithMetrics starts a server with its metrics listener on a free port
// and returns it with the listener's base URL.
func startWithMetrics(t *testing.T, opts ...hotkvtest.Option) (*hotkvtest.Server, string) {
	t.Helper()
	srv := hotkvtest.Start(t, append(opts, hotkvtest.WithFreePort("metrics-port"))...)
	addr := srv.Srv.MetricsAddr()
	if addr == nil {
		t.Fatal("no metrics listener")
	}
	return srv, "http://" + addr.String()
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// scrape reads /metrics as Prometheus does.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(httpGet(t, base+"/metrics")))
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

// value is a metric's value for the given label pairs (name=value).
func value(t *testing.T, mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	mf := mfs[name]
	if mf == nil {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range mf.Metric {
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			found := false
			for _, lp := range m.Label {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		case m.Summary != nil:
			return float64(m.Summary.GetSampleCount())
		}
	}
	t.Fatalf("no metric %s%v", name, labels)
	return 0
}

// /metrics against INFO: quiet, every figure equals INFO's taken right after
// (a scrape runs no command); under load from several clients, each counter
// lies between INFO's before and after the scrape.
func TestMetricsMatchInfo(t *testing.T) {
	srv, base := startWithMetrics(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	for i := 0; i < 50; i++ {
		c.Set(ctx, fmt.Sprint("k", i), i, 0)
		c.Get(ctx, fmt.Sprint("k", i*2))
		c.SetNX(ctx, fmt.Sprint("lock:", i%7), "t", time.Minute)
	}
	c.Do(ctx, "NOSUCHCOMMAND")
	c.Expire(ctx, "k1", time.Hour)

	mfs := scrape(t, base)
	info := infoFields(t, c, "everything")
	num := func(k string) float64 {
		v, err := strconv.ParseFloat(info[k], 64)
		if err != nil {
			t.Fatalf("INFO %s = %q", k, info[k])
		}
		return v
	}
	sub := func(field, key string) float64 {
		for _, p := range strings.Split(info[field], ",") {
			if k, v, ok := strings.Cut(p, "="); ok && k == key {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		t.Fatalf("INFO %s has no %s: %q", field, key, info[field])
		return 0
	}
	checks := []struct {
		metric string
		labels []string
		want   float64
	}{
		{"redis_up", nil, 1},
		{"redis_commands_processed_total", nil, num("total_commands_processed")},
		{"redis_connections_received_total", nil, num("total_connections_received")},
		{"redis_connected_clients", nil, num("connected_clients")},
		{"redis_keyspace_hits_total", nil, num("keyspace_hits")},
		{"redis_keyspace_misses_total", nil, num("keyspace_misses")},
		{"redis_commands_total", []string{"cmd=set"}, sub("cmdstat_set", "calls")},
		{"redis_commands_total", []string{"cmd=get"}, sub("cmdstat_get", "calls")},
		{"redis_commands_duration_seconds_total", []string{"cmd=set"}, sub("cmdstat_set", "usec") / 1e6},
		{"redis_errors_total", []string{"err=ERR"}, sub("errorstat_ERR", "count")},
		{"redis_db_keys", []string{"db=db0"}, sub("db0", "keys")},
		{"redis_db_keys_expiring", []string{"db=db0"}, sub("db0", "expires")},
		{"redis_memory_max_bytes", nil, num("maxmemory")},
		{"redis_config_maxclients", nil, 10000},
		{"redis_latency_percentiles_usec", []string{"cmd=set"}, sub("cmdstat_set", "calls")},
		{"redis_commands_latencies_usec", []string{"cmd=set"}, sub("cmdstat_set", "calls")},
		{"redis_slowlog_length", nil, 0},
		{"hotkv_locks_held", nil, num("locks_held")},
		{"hotkv_locks_acquired_total", nil, num("locks_acquired")},
		{"hotkv_locks_contended_total", nil, num("locks_contended")},
		{"hotkv_lock_wait_seconds", nil, sub("lock_wait_usec", "count")},
		{"hotkv_lock_key_acquired_total", []string{"db=0", "key=lock:0"}, 1},
		{"hotkv_lock_key_contended_total", []string{"db=0", "key=lock:0"}, 7},
		{"redis_instance_info", []string{"role=master", "redis_version=" + info["redis_version"]}, 1},
	}
	for _, ck := range checks {
		if got := value(t, mfs, ck.metric, ck.labels...); got != ck.want {
			t.Errorf("%s%v = %v, INFO says %v", ck.metric, ck.labels, got, ck.want)
		}
	}
	if v := value(t, mfs, "redis_start_time_seconds"); v < float64(time.Now().Unix()-60) || v > float64(time.Now().Unix()+1) {
		t.Errorf("start time %v", v)
	}

	// under load
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			lc := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer lc.Close()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprint("lk", i%10)
				if ok, _ := lc.SetNX(ctx, key, w, time.Minute).Result(); ok {
					lc.Do(ctx, "DELEX", key, "IFEQ", w)
				}
				lc.Incr(ctx, "n")
			}
		}(w)
	}
	counters := []struct{ metric, info string }{
		{"redis_commands_processed_total", "total_commands_processed"},
		{"hotkv_locks_acquired_total", "locks_acquired"},
		{"hotkv_locks_contended_total", "locks_contended"},
		{"hotkv_locks_released_total", "locks_released"},
		{"redis_net_input_bytes_total", "total_net_input_bytes"},
	}
	for round := 0; round < 5; round++ {
		time.Sleep(50 * time.Millisecond)
		before := infoFields(t, c, "everything")
		mfs := scrape(t, base)
		after := infoFields(t, c, "everything")
		for _, ck := range counters {
			lo, _ := strconv.ParseFloat(before[ck.info], 64)
			hi, _ := strconv.ParseFloat(after[ck.info], 64)
			if got := value(t, mfs, ck.metric); got < lo || got > hi {
				t.Errorf("round %d: %s = %v, INFO %s went %v .. %v", round, ck.metric, got, ck.info, lo, hi)
			}
		}
		if lo, got := before["locks_acquired"], value(t, mfs, "hotkv_locks_acquired_total"); lo == "0" || got == 0 {
			t.Errorf("round %d: no load seen", round)
		}
	}
	close(stop)
	wg.Wait()
}

// The status page and its figures: /status.json reports the window's
// operations per second and latency, memory, clients, the slow log's head
// and the lock table.
func TestStatusJSON(t *testing.T) {
	srv, base := startWithMetrics(t, hotkvtest.WithConfig("slowlog-log-slower-than", "0"))
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	c.SetNX(ctx, "lock:billing-run", "tok-a81f", time.Minute)
	c.SetNX(ctx, "lock:billing-run", "tok-b22c", time.Minute)
	var st metrics.Status
	read := func() {
		if err := json.Unmarshal([]byte(httpGet(t, base+"/status.json")), &st); err != nil {
			t.Fatal(err)
		}
	}
	read() // opens the first window
	for i := 0; i < 200; i++ {
		c.Incr(ctx, "n")
	}
	time.Sleep(1100 * time.Millisecond)
	read()
	if st.OpsPerSec <= 0 || st.P50us <= 0 || st.P99us < st.P50us || st.Version == "" || st.ConnectedClients < 1 || st.UsedMemory <= 0 || st.Keys != 2 {
		t.Errorf("figures %+v", st)
	}
	if len(st.Locks.Table) != 1 || st.Locks.Table[0].Key != "lock:billing-run" || st.Locks.Contended != 1 || st.Locks.Table[0].Refused != 1 || st.Locks.Table[0].TTLms <= 0 {
		t.Errorf("locks %+v", st.Locks)
	}
	if len(st.Slowlog) == 0 || st.SlowlogLen == 0 || !strings.Contains(st.Slowlog[len(st.Slowlog)-1].Cmd, "lock:billing-run") && st.SlowlogLen < 10 {
		t.Errorf("slowlog %+v", st.Slowlog)
	}
	page := httpGet(t, base+"/")
	if !strings.Contains(page, "<title>HotKV status</title>") || !strings.Contains(page, "status.json") {
		t.Error("the status page")
	}
	resp, err := http.Get(base + "/nosuch")
	if err != nil || resp.StatusCode != 404 {
		t.Errorf("unknown path: %v %v", resp.StatusCode, err)
	}
}

// The Grafana dashboard in deploy/grafana asks only for series HotKV's
// /metrics serves: every metric name in its queries is in a scrape (a
// histogram's _bucket by its family).
func TestGrafanaDashboardMetricsExist(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "grafana", "hotkv.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	srv, base := startWithMetrics(t, hotkvtest.WithConfig("enable-debug-command", "yes"))
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	c.ConfigSet(ctx, "latency-monitor-threshold", "1")
	c.Do(ctx, "DEBUG", "SLEEP", "0.005")
	c.SetNX(ctx, "lock:a", "t", time.Minute)
	c.SetNX(ctx, "lock:a", "u", time.Minute)
	c.Do(ctx, "NOSUCH")
	mfs := scrape(t, base)
	name := regexp.MustCompile(`\b(?:redis|hotkv)_[a-z0-9_]+`)
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				n++
				fam := strings.TrimSuffix(m, "_bucket")
				if mfs[m] == nil && mfs[fam] == nil {
					t.Errorf("panel %q asks for %s, which /metrics does not serve", p.Title, m)
				}
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d metric references found", n)
	}
}
