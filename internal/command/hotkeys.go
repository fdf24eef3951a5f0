package command

import (
	"strconv"
	"strings"

	"github.com/hotkv/hotkv/internal/introspect"
	"github.com/hotkv/hotkv/internal/resp"
)

// hotkeysCommands is HOTKEYS (Redis 8.6's hotkeys.c): a session that finds
// the keys that cost the most CPU time and network bytes. The session is the
// server's (Server.Hotkeys), fed by its execution path while it runs.
func hotkeysCommands() []*Spec {
	adm := Admin | NoScript
	special := "request_policy:special"
	return []*Spec{
		{Name: "hotkeys", Arity: -2, Subs: []*Spec{
			{Name: "get", Arity: 2, Flags: adm, Tips: []string{"nondeterministic_output", special, "response_policy:special"}, Run: hotkeysGet},
			{Name: "help", Arity: 2, Flags: Loading | Stale, Run: hotkeysHelp},
			{Name: "reset", Arity: 2, Flags: adm, Tips: []string{special}, Run: hotkeysReset},
			{Name: "start", Arity: -2, Flags: adm, Tips: []string{special}, Run: hotkeysStart},
			{Name: "stop", Arity: 2, Flags: adm, Tips: []string{special}, Run: hotkeysStop},
		}},
	}
}

// HotkeysMetricsMax is how many metrics there are (HOTKEYS_METRICS_COUNT).
const HotkeysMetricsMax = 2

// ParseHotkeysStart parses HOTKEYS START's arguments (argv[2:] of
// HOTKEYS START METRICS count [CPU] [NET] [COUNT k] [DURATION seconds]
// [SAMPLE ratio] [SLOTS count slot...]) in hotkeysCommand's order, with its
// errors. Unknown metric names within the count are accepted and ignored (as
// Redis does, for forward compatibility). HotKV has no cluster mode, so
// SLOTS is refused as it is in Redis outside cluster mode.
func ParseHotkeysStart(args [][]byte) (cfg introspect.HotkeysConfig, errMsg string) {
	if len(args) < 2 || !strings.EqualFold(string(args[0]), "METRICS") {
		return cfg, "ERR METRICS parameter is required"
	}
	rangeArg := func(a []byte, lo, hi int64, msg string) (int64, string) {
		n, ok := resp.ParseInt(a)
		if !ok || n < lo || n > hi {
			return 0, "ERR " + msg
		}
		return n, ""
	}
	count, e := rangeArg(args[1], 1, HotkeysMetricsMax,
		"METRICS count must be > 0 and <= "+strconv.Itoa(HotkeysMetricsMax))
	if e != "" {
		return cfg, e
	}
	j, parsed, valid := 2, int64(0), 0
	for ; j < len(args) && parsed < count; j, parsed = j+1, parsed+1 {
		switch strings.ToUpper(string(args[j])) {
		case "CPU":
			if cfg.CPU {
				return cfg, "ERR METRICS CPU defined more than once!"
			}
			cfg.CPU = true
			valid++
		case "NET":
			if cfg.Net {
				return cfg, "ERR METRICS NET defined more than once!"
			}
			cfg.Net = true
			valid++
		}
	}
	if parsed != count {
		return cfg, "ERR METRICS count does not match number of metric types provided"
	}
	if valid == 0 {
		return cfg, "ERR METRICS no valid metrics passed. Supported: CPU|NET"
	}
	cfg.Count, cfg.SampleRatio = 10, 1
	for j < len(args) {
		more := j+1 < len(args)
		opt := strings.ToUpper(string(args[j]))
		switch {
		case more && opt == "COUNT":
			n, e := rangeArg(args[j+1], 1, 64, "COUNT must be between 1 and 64")
			if e != "" {
				return cfg, e
			}
			cfg.Count = int(n)
		case more && opt == "DURATION":
			// at most a million seconds, as Redis keeps it in ms in an int
			n, e := rangeArg(args[j+1], 1, 1000000, "DURATION must be between 1 and 1000000")
			if e != "" {
				return cfg, e
			}
			cfg.DurationMs = n * 1000
		case more && opt == "SAMPLE":
			n, e := rangeArg(args[j+1], 1, 1<<31-1, "SAMPLE ratio must be positive")
			if e != "" {
				return cfg, e
			}
			cfg.SampleRatio = int(n)
		case more && opt == "SLOTS":
			return cfg, "ERR SLOTS parameter cannot be used in non-cluster mode"
		default:
			return cfg, "ERR syntax error"
		}
		j += 2
	}
	return cfg, ""
}

func hotkeysStart(c *Ctx) {
	if h := c.Srv.Hotkeys(); h != nil && h.Active {
		c.Error("ERR hotkey tracking session already in progress")
		return
	}
	cfg, e := ParseHotkeysStart(c.Argv[2:])
	if e != "" {
		c.Error(e)
		return
	}
	c.Srv.HotkeysStart(cfg)
	c.W.SimpleString("OK")
}

func hotkeysStop(c *Ctx) {
	if h := c.Srv.Hotkeys(); h == nil || !h.Active {
		c.W.Null()
		return
	}
	c.Srv.HotkeysStop()
	c.W.SimpleString("OK")
}

func hotkeysReset(c *Ctx) {
	if h := c.Srv.Hotkeys(); h != nil && h.Active {
		c.Error("ERR hotkey tracking session in progress, stop tracking first")
		return
	}
	c.Srv.HotkeysReset()
	c.W.SimpleString("OK")
}

// hotkeysGet is HOTKEYS GET: an array of one map (for aggregating the
// replies of a cluster's nodes), or null when there is no session. Without
// selected slots (no cluster mode) the map has none of the per-slot fields.
func hotkeysGet(c *Ctx) {
	h := c.Srv.Hotkeys()
	if h == nil {
		c.W.Null()
		return
	}
	n := 7
	if h.Cfg.CPU {
		n += 3
	}
	if h.Cfg.Net {
		n += 2
	}
	c.W.ArrayLen(1)
	c.W.MapLen(n)
	field := func(name string, v int64) {
		c.W.BulkString(name)
		c.W.Int(v)
	}
	active := int64(0)
	if h.Active {
		active = 1
	}
	field("tracking-active", active)
	field("sample-ratio", int64(h.Cfg.SampleRatio))
	c.W.BulkString("selected-slots")
	c.W.ArrayLen(1) // this node's slots: all of them
	c.W.ArrayLen(2)
	c.W.Int(0)
	c.W.Int(16383)
	field("all-commands-all-slots-us", int64(h.TimeAllUs))
	field("net-bytes-all-commands-all-slots", int64(h.NetAll))
	field("collection-start-time-unix-ms", h.StartMs)
	field("collection-duration-ms", h.ElapsedMs(c.Now))
	if h.Cfg.CPU {
		user, sys := c.Srv.HotkeysCPUMs()
		field("total-cpu-time-user-ms", user)
		field("total-cpu-time-sys-ms", sys)
	}
	if h.Cfg.Net {
		field("total-net-bytes", int64(h.NetTop.Total))
	}
	top := func(name string, t *introspect.TopK) {
		c.W.BulkString(name)
		l := h.Top(t)
		c.W.ArrayLen(2 * len(l))
		for _, it := range l {
			c.W.Bulk(it.Item)
			c.W.Int(int64(it.Count))
		}
	}
	if h.Cfg.CPU {
		top("by-cpu-time-us", h.CPUTop)
	}
	if h.Cfg.Net {
		top("by-net-bytes", h.NetTop)
	}
}

func hotkeysHelp(c *Ctx) {
	writeHelp(c, "HOTKEYS",
		"START <METRICS count [CPU] [NET]> [COUNT k] [DURATION duration] [SAMPLE ratio] [SLOTS count slot...]",
		"    Starts hotkeys tracking with specified metrics.",
		"    * METRICS count [CPU] [NET]",
		"        Specify count of metrics and choose amongst:",
		"        - CPU: Track hotkeys by CPU time percentage",
		"        - NET: Track hotkeys by network bytes percentage",
		"    * COUNT k",
		"        Specifies the value of K for the top-K hotkeys tracking. Default: 10",
		"    * DURATION duration",
		"        Specifies tracking duration in seconds. 0 means tracking will continue until manually stopped. Default: 0",
		"    * SAMPLE ratio",
		"        Keys are tracked with probability 1/ratio. Default: 1 (tracks every key)",
		"    * SLOTS count slot...",
		"        Specify which slots to track keys from. Only available in cluster mode. Default: empty (track all slots)",
		"STOP",
		"    Stop hotkeys tracking. Results are still available via GET",
		"GET",
		"    Get results from hotkeys tracking.",
		"RESET",
		"    Reset memory used for hotkeys tracking. Tracking must have been stopped.",
		"    Results will no longer be available after this command.")
}
