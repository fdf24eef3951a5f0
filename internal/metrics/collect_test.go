package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hotkv/hotkv/internal/introspect"
	"github.com/hotkv/hotkv/internal/locks"
)

const sampleInfo = "# Server\r\nredis_version:8.6.3\r\nuptime_in_seconds:100\r\nhz:10\r\nconfigured_hz:10\r\n" +
	"# Clients\r\nconnected_clients:3\r\n# Memory\r\nused_memory:1000\r\nmaxmemory:0\r\n" +
	"# Persistence\r\nrdb_last_bgsave_status:ok\r\naof_last_write_status:err\r\n" +
	"# Stats\r\ntotal_commands_processed:42\r\nkeyspace_hits:7\r\nlatest_fork_usec:2500\r\n" +
	"# Replication\r\nrole:master\r\nslave0:ip=10.0.0.2,port=6380,state=online,offset=99,lag=1\r\n" +
	"# Commandstats\r\ncmdstat_set:calls=10,usec=50,usec_per_call=5.00,rejected_calls=1,failed_calls=2\r\n" +
	"cmdstat_config|get:calls=1,usec=3,usec_per_call=3.00,rejected_calls=0,failed_calls=0\r\n" +
	"# Latencystats\r\nlatency_percentiles_usec_set:p50=1.003,p99=4.015,p99.9=9.023\r\n" +
	"# Errorstats\r\nerrorstat_ERR:count=4\r\n# Keyspace\r\ndb0:keys=5,expires=1,avg_ttl=2000,subexpiry=0\r\n"

func gather(t testing.TB, s *Snapshot) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(func() *Snapshot { return s }))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
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
			out[mf.GetName()+"{"+strings.Join(lbl, ",")+"}"] = v
		}
	}
	return out
}

// The collector names INFO's fields as redis_exporter does and exports the
// lock view under HotKV's names.
func TestCollectorNames(t *testing.T) {
	var lv LockView
	lv.Held, lv.C.Acquired, lv.C.ExpiredHeld = 2, 9, 1
	lv.Hold.Add(1500)
	lv.Top = []locks.KeyView{{DB: 0, Key: "lock:a", KeyStats: locks.KeyStats{Counters: locks.Counters{Acquired: 4, Contended: 3}}}}
	s := &Snapshot{NowMs: 1_000_000, Info: sampleInfo,
		Config:     map[string]string{"maxclients": "10000", "client-output-buffer-limit": "normal 0 0 0 replica 268435456 67108864 60"},
		SlowLen:    3,
		Slow:       []introspect.SlowEntry{{ID: 7, DurUs: 12000}},
		Latency:    []LatencyEvent{{Name: "command", Time: 999, LastMs: 250, MaxMs: 300}},
		Histograms: []CmdHistogram{{Cmd: "set", Calls: 10, CDF: [][2]int64{{1, 4}, {8, 10}}}},
		Locks:      lv}
	got := gather(t, s)
	want := map[string]float64{
		"redis_up{}":                       1,
		"redis_uptime_in_seconds{}":        100,
		"redis_start_time_seconds{}":       900,
		"redis_hz{}":                       10,
		"redis_connected_clients{}":        3,
		"redis_memory_used_bytes{}":        1000,
		"redis_rdb_last_bgsave_status{}":   1,
		"redis_aof_last_write_status{}":    0,
		"redis_commands_processed_total{}": 42,
		"redis_keyspace_hits_total{}":      7,
		"redis_latest_fork_seconds{}":      0.0025,
		"redis_connected_slave_offset_bytes{slave_ip=10.0.0.2,slave_port=6380,slave_state=online}": 99,
		"redis_commands_total{cmd=set}":                                           10,
		"redis_commands_duration_seconds_total{cmd=set}":                          0.00005,
		"redis_commands_rejected_calls_total{cmd=set}":                            1,
		"redis_commands_failed_calls_total{cmd=set}":                              2,
		"redis_commands_total{cmd=config|get}":                                    1,
		"redis_latency_percentiles_usec{cmd=set}":                                 10,
		"redis_errors_total{err=ERR}":                                             4,
		"redis_db_keys{db=db0}":                                                   5,
		"redis_db_keys_expiring{db=db0}":                                          1,
		"redis_db_avg_ttl_seconds{db=db0}":                                        2,
		"redis_db_keys_cached{db=db0}":                                            0,
		"redis_config_maxclients{}":                                               10000,
		"redis_config_client_output_buffer_limit_bytes{class=replica,limit=hard}": 268435456,
		"redis_slowlog_length{}":                                                  3,
		"redis_slowlog_last_id{}":                                                 7,
		"redis_last_slow_execution_duration_seconds{}":                            0.012,
		"redis_latency_spike_duration_seconds{event_name=command}":                0.25,
		"redis_commands_latencies_usec{cmd=set}":                                  10,
		"hotkv_locks_held{}":                                                      2,
		"hotkv_locks_acquired_total{}":                                            9,
		"hotkv_locks_expired_while_held_total{}":                                  1,
		"hotkv_lock_hold_seconds{}":                                               1,
		"hotkv_lock_key_contended_total{db=0,key=lock:a}":                         3,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if v, ok := got["redis_instance_info{master_replid=,maxmemory_policy=,os=,process_id=,redis_build_id=,redis_mode=,redis_version=8.6.3,role=master,run_id=,tcp_port=}"]; !ok || v != 1 {
		t.Errorf("instance_info: %v", got)
	}
}

// FuzzSamples: whatever INFO's text, the samples have no duplicate series
// (which would fail the whole scrape) and each names its labels' values, and
// a scrape gathers them (the parse is fuzzed alone: the Prometheus
// library's code makes a coverage-guided run of the whole scrape crawl).
func FuzzSamples(f *testing.F) {
	f.Add(sampleInfo)
	f.Add("# Commandstats\r\ncmdstat_set:calls=1,usec=1,usec_per_call=1,rejected_calls=0,failed_calls=0\r\ncmdstat_set:calls=1,usec=1,usec_per_call=1,rejected_calls=0,failed_calls=0\r\n")
	f.Add("# Keyspace\r\ndb0:keys=1,expires=0\r\ndb0:keys=2,expires=0\r\n# Server\r\nhz:1\r\nhz:2\r\n")
	f.Add("# Latencystats\r\nlatency_percentiles_usec_get:p50=1,p99=x\r\n# Replication\r\nslave0:ip=a,offset=1\r\n")
	f.Fuzz(func(t *testing.T, info string) {
		seen := map[string]bool{}
		for _, m := range samples(&Snapshot{Info: info, Config: map[string]string{}}) {
			id := m.name + "\x00" + strings.Join(m.values, "\x00")
			if seen[id] {
				t.Fatalf("duplicate series %s%v", m.name, m.values)
			}
			seen[id] = true
			if len(m.labels) != len(m.values) {
				t.Fatalf("%s: labels %v, values %v", m.name, m.labels, m.values)
			}
		}
	})
}

// A lock key that is not UTF-8 cannot be a label value: its series is
// dropped, the scrape goes on.
func TestCollectBinaryLockKey(t *testing.T) {
	var lv LockView
	lv.Top = []locks.KeyView{{Key: "lock:\xff\xfe"}, {Key: "lock:ok"}}
	got := gather(t, &Snapshot{Info: sampleInfo, Config: map[string]string{}, Locks: lv})
	if _, ok := got["hotkv_lock_key_acquired_total{db=0,key=lock:ok}"]; !ok || got["redis_up{}"] != 1 {
		t.Errorf("%v", got)
	}
	for k := range got {
		if strings.Contains(k, "\xff") {
			t.Errorf("exported %q", k)
		}
	}
}

// A repeated INFO field does not fail the scrape.
func TestCollectRepeatedFields(t *testing.T) {
	got := gather(t, &Snapshot{Info: "# Keyspace\r\ndb0:keys=1,expires=0\r\ndb0:keys=2,expires=0\r\n# Server\r\nhz:1\r\nhz:2\r\n", Config: map[string]string{}})
	if got["redis_db_keys{db=db0}"] != 1 || got["redis_hz{}"] != 1 {
		t.Errorf("%v", got)
	}
}
