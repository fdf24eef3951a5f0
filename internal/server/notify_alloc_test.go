package server

import "testing"

// Keyspace notifications cost nothing when they are off (the default: one
// atomic load per event) and allocate nothing when they are on but nobody is
// subscribed (Redis 8.6 returns early too): the hot path stays at zero
// allocations either way, the "new"/"keymiss" events of the keyspace layer
// included.
func TestNotifyHotPathAllocs(t *testing.T) {
	cases := append(hotCases[:len(hotCases):len(hotCases)], hotCases[0])
	cases[len(cases)-1].name, cases[len(cases)-1].setup, cases[len(cases)-1].argv = "GET_miss", nil, []string{"GET", "nokey"}
	for _, flags := range []string{"", "KEAnocm"} {
		for _, hc := range cases {
			s, cl := newBenchServer(t)
			run(s, cl, args("CONFIG", "SET", "notify-keyspace-events", flags))
			for _, st := range hc.setup {
				run(s, cl, args(st...))
			}
			argv := args(hc.argv...)
			run(s, cl, argv)
			if n := testing.AllocsPerRun(500, func() { run(s, cl, argv) }); n != 0 {
				t.Errorf("notify-keyspace-events %q: %s: %.1f allocations per command, want 0", flags, hc.name, n)
			}
		}
	}
}
