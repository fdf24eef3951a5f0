package command

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseHotkeysStart(t *testing.T) {
	args := func(s string) [][]byte {
		var out [][]byte
		for _, f := range strings.Fields(s) {
			out = append(out, []byte(f))
		}
		return out
	}
	cfg, e := ParseHotkeysStart(args("metrics 2 net gpu count 64 duration 1000000 sample 7 count 3"))
	if e != "" || !cfg.Net || cfg.CPU || cfg.Count != 3 || cfg.DurationMs != 1e9 || cfg.SampleRatio != 7 {
		t.Errorf("%+v %q", cfg, e)
	}
	cfg, e = ParseHotkeysStart(args("METRICS 1 CPU"))
	if e != "" || !cfg.CPU || cfg.Net || cfg.Count != 10 || cfg.DurationMs != 0 || cfg.SampleRatio != 1 {
		t.Errorf("defaults: %+v %q", cfg, e)
	}
	for in, want := range map[string]string{
		"":                         "ERR METRICS parameter is required",
		"METRICS":                  "ERR METRICS parameter is required",
		"METRICS 1 CPU COUNT":      "ERR syntax error",
		"METRICS 1 CPU DURATION x": "ERR DURATION must be between 1 and 1000000",
		"METRICS 1 CPU SLOTS 1 0":  "ERR SLOTS parameter cannot be used in non-cluster mode",
		"METRICS 2 CPU":            "ERR METRICS count does not match number of metric types provided",
		"METRICS 1 foo":            "ERR METRICS no valid metrics passed. Supported: CPU|NET",
	} {
		if _, e := ParseHotkeysStart(args(in)); e != want {
			t.Errorf("%q: %q, want %q", in, e, want)
		}
	}
}

// FuzzParseHotkeysStart: any arguments give a well-formed answer: an error
// of Redis's form, or a configuration within Redis's limits.
func FuzzParseHotkeysStart(f *testing.F) {
	f.Add([]byte("METRICS 2 CPU NET COUNT 5 DURATION 3 SAMPLE 9"))
	f.Add([]byte("METRICS 1 NET SLOTS 2 0 5"))
	f.Fuzz(func(t *testing.T, line []byte) {
		cfg, e := ParseHotkeysStart(bytes.Fields(line))
		if e != "" {
			if !strings.HasPrefix(e, "ERR ") {
				t.Fatalf("error %q", e)
			}
			return
		}
		if !cfg.CPU && !cfg.Net || cfg.Count < 1 || cfg.Count > 64 || cfg.SampleRatio < 1 ||
			cfg.DurationMs < 0 || cfg.DurationMs > 1e9 || cfg.DurationMs%1000 != 0 {
			t.Fatalf("accepted %q as %+v", line, cfg)
		}
	})
}
