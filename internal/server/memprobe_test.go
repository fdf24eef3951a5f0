package server

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMemProbe is a measurement, not a check (it skips unless MEMPROBE is set):
// the live heap bytes per key after loading keys through dispatch, with a
// collection before and after so that garbage does not count, and the cost of
// collecting that heap. It complements bench/mem-per-key.sh, whose RSS figure
// also holds whatever garbage the last collection left.
//
//	MEMPROBE=string,string-ttl,hash,intset,set,zset,list MEMPROBE_N=1000000 \
//	  go test ./internal/server -run TestMemProbe -v -count=1
//
// For each type: live B/key, allocations and bytes allocated per key while
// loading, the scannable heap per key (runtime/metrics /gc/scan/heap:bytes: what
// the collector's mark phase walks), and for MEMPROBE_GCS forced collections
// (default 20) the mean wall time of a cycle, the mark CPU per cycle and the
// stop-the-world pauses (p50, p99, max).
func TestMemProbe(t *testing.T) {
	types := os.Getenv("MEMPROBE")
	if types == "" {
		t.Skip("a measurement: set MEMPROBE=string,hash,... to run it")
	}
	n, gcs := 100_000, 20
	if v, err := strconv.Atoi(os.Getenv("MEMPROBE_N")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.Atoi(os.Getenv("MEMPROBE_GCS")); err == nil && v >= 0 {
		gcs = v
	}
	five := func(cmd, key string, el func(j int) []string) []string {
		a := []string{cmd, key}
		for j := 1; j <= 5; j++ {
			a = append(a, el(j)...)
		}
		return a
	}
	gen := map[string]func(k string, i int) []string{
		"string":     func(k string, i int) []string { return []string{"SET", k, fmt.Sprintf("val:%028d", i)} },
		"string-ttl": func(k string, i int) []string { return []string{"SET", k, fmt.Sprintf("val:%028d", i), "EX", "100000"} },
		"hash": func(k string, i int) []string {
			return five("HSET", k, func(j int) []string { return []string{fmt.Sprintf("field%d", j), fmt.Sprintf("value:%d", j)} })
		},
		"intset": func(k string, i int) []string {
			return five("SADD", k, func(j int) []string { return []string{strconv.Itoa((i%1000)*10 + j)} })
		},
		"set": func(k string, i int) []string {
			return five("SADD", k, func(j int) []string { return []string{fmt.Sprintf("member:%d", j)} })
		},
		"zset": func(k string, i int) []string {
			return five("ZADD", k, func(j int) []string { return []string{strconv.Itoa(j), fmt.Sprintf("member:%d", j)} })
		},
		"list": func(k string, i int) []string {
			return five("RPUSH", k, func(j int) []string { return []string{fmt.Sprintf("element:%d", j)} })
		},
	}
	width := max(6, len(strconv.Itoa(n)))
	for _, typ := range strings.Split(types, ",") {
		g := gen[typ]
		if g == nil {
			t.Fatalf("unknown type %q", typ)
		}
		s, cl := newBenchServer(t)
		// the commands, in pointer-free memory that stays live until the end:
		// it neither counts in the differences nor adds to the GC's scan work
		var blob []byte
		var ends []int32 // per argument; 0 ends a command
		for i := range n {
			for _, a := range g(fmt.Sprintf("key:%0*d", width, i+1), i+1) {
				blob = append(blob, a...)
				ends = append(ends, int32(len(blob)))
			}
			ends = append(ends, 0)
		}
		argv := make([][]byte, 0, 16)
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		off := int32(0)
		for _, e := range ends {
			if e == 0 {
				run(s, cl, argv)
				argv = argv[:0]
				continue
			}
			argv = append(argv, blob[off:e:e])
			off = e
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		live := float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / float64(n)

		sm := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}, {Name: "/sched/pauses/total/gc:seconds"}, {Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"},
			{Name: "/cpu/classes/gc/mark/idle:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/assist:cpu-seconds"}}
		metrics.Read(sm)
		scan := float64(sm[0].Value.Uint64()) / float64(n)
		before := sm[1].Value.Float64Histogram()
		pb := append([]uint64(nil), before.Counts...)
		cpu0 := sm[2].Value.Float64() + sm[3].Value.Float64() + sm[4].Value.Float64()
		t0 := time.Now()
		for range gcs {
			runtime.GC()
		}
		wall := time.Since(t0)
		metrics.Read(sm)
		cpu1 := sm[2].Value.Float64() + sm[3].Value.Float64() + sm[4].Value.Float64()
		after := sm[1].Value.Float64Histogram()
		for i := range pb {
			pb[i] = after.Counts[i] - pb[i]
		}
		q := func(p float64) float64 { return histQuantile(pb, after.Buckets, p) * 1e3 }
		t.Logf("%-10s n=%d live %.1f B/key, load: %.2f allocs/key %.1f B/key; scannable heap %.1f B/key; %d GCs: %.1f ms/cycle, mark CPU %.1f ms/cycle, STW pauses p50 %.3f p99 %.3f max %.3f ms",
			typ, n, live, float64(m1.Mallocs-m0.Mallocs)/float64(n), float64(m1.TotalAlloc-m0.TotalAlloc)/float64(n), scan,
			gcs, float64(wall.Microseconds())/1e3/float64(max(gcs, 1)), (cpu1-cpu0)*1e3/float64(max(gcs, 1)), q(0.5), q(0.99), q(1))
		runtime.KeepAlive(s)
		runtime.KeepAlive(cl)
		runtime.KeepAlive(blob)
		runtime.KeepAlive(ends)
	}
}

// histQuantile returns the upper bound of the bucket holding quantile p of counts.
func histQuantile(counts []uint64, buckets []float64, p float64) float64 {
	var total uint64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return math.NaN()
	}
	want := uint64(math.Ceil(p * float64(total)))
	var acc uint64
	for i, c := range counts {
		if acc += c; acc >= want && c > 0 {
			return buckets[i+1]
		}
	}
	return buckets[len(buckets)-1]
}
