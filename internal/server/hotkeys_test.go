package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// hotkeysGet is HOTKEYS GET's map, from either protocol (go-redis gives
// RESP2's flat array as a slice, RESP3's map as a map).
func hotkeysGet(t *testing.T, c *redis.Client) map[string]any {
	t.Helper()
	v, err := c.Do(context.Background(), "HOTKEYS", "GET").Result()
	if err != nil {
		t.Fatal(err)
	}
	outer, ok := v.([]any)
	if !ok || len(outer) != 1 {
		t.Fatalf("HOTKEYS GET: %#v", v)
	}
	m := map[string]any{}
	switch r := outer[0].(type) {
	case map[any]any:
		for k, v := range r {
			m[k.(string)] = v
		}
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			m[r[i].(string)] = r[i+1]
		}
	default:
		t.Fatalf("HOTKEYS GET element: %#v", outer[0])
	}
	return m
}

// A skewed workload over go-redis, in both protocols: the session finds the
// hot keys by CPU time and by bytes, GET's totals add up, STOP freezes the
// results, and INFO's Hotkeys section follows the session. The server keeps
// the live clock: commands take time.
func TestHotkeysFindTheHotKeys(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			srv := hotkvtest.Start(t)
			hotkeysFindTheHotKeys(t, client(t, srv.Addr, proto))
		})
	}
}

func hotkeysFindTheHotKeys(t *testing.T, c *redis.Client) {
	{
		ctx := context.Background()
		if info := c.Info(ctx).Val(); !strings.Contains(info, "# Hotkeys\r\n\r\n") {
			t.Fatalf("INFO lacks an empty Hotkeys section:\n%s", info)
		}
		if err := c.Do(ctx, "HOTKEYS", "START", "METRICS", "2", "CPU", "NET", "COUNT", "5").Err(); err != nil {
			t.Fatal(err)
		}
		if info := c.Info(ctx, "hotkeys").Val(); !strings.Contains(info, "hotkeys-tracking-active:1\r\n") {
			t.Fatalf("INFO hotkeys: %q", info)
		}
		big := strings.Repeat("v", 2000)
		for i := 0; i < 3000; i++ {
			switch {
			case i%3 == 0:
				c.Set(ctx, "hot:big", big, 0)
			case i%3 == 1:
				c.Get(ctx, fmt.Sprintf("hot:%d", i%2))
			default:
				c.Set(ctx, fmt.Sprintf("cold:%d", i), "x", 0)
			}
		}
		if err := c.Do(ctx, "HOTKEYS", "STOP").Err(); err != nil {
			t.Fatal(err)
		}
		m := hotkeysGet(t, c)
		if m["tracking-active"] != int64(0) || m["sample-ratio"] != int64(1) {
			t.Errorf("GET: %v", m)
		}
		net := m["by-net-bytes"].([]any)
		if len(net) != 10 || net[0] != "hot:big" {
			t.Fatalf("by-net-bytes: %v", net)
		}
		// 1000 SETs of 2000 bytes: request 2000+ bytes and +OK each
		if b := net[1].(int64); b < 1000*2030 || b > 1000*2040 {
			t.Errorf("hot:big charged %d bytes", b)
		}
		keys := map[string]bool{}
		for i := 0; i < len(net); i += 2 {
			keys[net[i].(string)] = true
		}
		if !keys["hot:0"] || !keys["hot:1"] {
			t.Errorf("the read keys are not among the top 5 by bytes: %v", net)
		}
		cpu := m["by-cpu-time-us"].([]any)
		if len(cpu) == 0 || len(cpu) > 10 {
			t.Errorf("by-cpu-time-us: %v", cpu)
		}
		// a cold key is set once: one slow run (a GC pause) can put it in
		// the top 5, but not above all three hot keys
		hot := 0
		for i := 0; i < len(cpu); i += 2 {
			if strings.HasPrefix(cpu[i].(string), "hot:") {
				hot++
			}
		}
		if hot < 2 {
			t.Errorf("the hot keys are not the top by CPU: %v", cpu)
		}
		if tot, all := m["total-net-bytes"].(int64), m["net-bytes-all-commands-all-slots"].(int64); tot != all || tot < 1000*2030 {
			t.Errorf("total-net-bytes %d, all commands %d", tot, all)
		}
		d := m["collection-duration-ms"].(int64)
		time.Sleep(20 * time.Millisecond)
		if m2 := hotkeysGet(t, c); m2["collection-duration-ms"].(int64) != d {
			t.Errorf("a stopped session's duration moved: %d then %d", d, m2["collection-duration-ms"])
		}
		if info := c.Info(ctx, "hotkeys").Val(); !strings.Contains(info, "hotkeys-tracking-active:0\r\n") {
			t.Errorf("INFO hotkeys after STOP: %q", info)
		}
		if err := c.Do(ctx, "HOTKEYS", "RESET").Err(); err != nil {
			t.Fatal(err)
		}
		if v, err := c.Do(ctx, "HOTKEYS", "GET").Result(); err != redis.Nil {
			t.Errorf("GET after RESET: %v %v", v, err)
		}
	}
}

// DURATION stops the session by itself (the server's cron, on the fake
// clock), and SAMPLE keeps the totals of every command while only some keys
// are tracked.
func TestHotkeysDurationAndSample(t *testing.T) {
	eachProto(t, func(t *testing.T, c *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		if err := c.Do(ctx, "HOTKEYS", "START", "METRICS", "1", "NET", "DURATION", "1", "SAMPLE", "4").Err(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2000; i++ {
			c.Set(ctx, "k", "v", 0) // 27 bytes of request, 5 of reply
		}
		m := hotkeysGet(t, c)
		if all := m["net-bytes-all-commands-all-slots"].(int64); all != 2000*32 {
			t.Errorf("all commands: %d bytes, want %d", all, 2000*32)
		}
		if tot := m["total-net-bytes"].(int64); tot < 2000*32/4*8/10 || tot > 2000*32/4*12/10 {
			t.Errorf("sampled 1/4: %d bytes of %d", tot, 2000*32)
		}
		if hotkeysGet(t, c)["tracking-active"] != int64(1) {
			t.Fatal("stopped before its time")
		}
		srv.Clock.Advance(1100 * time.Millisecond)
		deadline := time.Now().Add(5 * time.Second)
		for hotkeysGet(t, c)["tracking-active"] != int64(0) {
			if time.Now().After(deadline) {
				t.Fatal("DURATION 1: still tracking after 5s")
			}
			time.Sleep(50 * time.Millisecond)
		}
		if d := hotkeysGet(t, c)["collection-duration-ms"].(int64); d != 1100 {
			t.Errorf("collection-duration-ms %d after DURATION 1", d)
		}
		before := hotkeysGet(t, c)["net-bytes-all-commands-all-slots"]
		c.Set(ctx, "k", "v", 0)
		if after := hotkeysGet(t, c)["net-bytes-all-commands-all-slots"]; after != before {
			t.Errorf("counted after the session stopped: %v then %v", before, after)
		}
		if err := c.Do(ctx, "HOTKEYS", "RESET").Err(); err != nil {
			t.Fatal(err)
		}
	})
}
