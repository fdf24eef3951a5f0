package command

import (
	"strings"

	"github.com/hotkv/hotkv/internal/resp"
)

// introspectCommands are SLOWLOG, LATENCY and MONITOR (redis.io's "server"
// group; slowlog.c, latency.c, server.c's monitorCommand). The state is the
// server's (Server.Slowlog, Server.Latency), fed by its execution path.
func introspectCommands() []*Spec {
	adm := Admin | Loading | Stale
	lat := Admin | NoScript | Loading | Stale
	nd := "nondeterministic_output"
	special := []string{nd, "request_policy:all_nodes", "response_policy:special"}
	return []*Spec{
		{Name: "slowlog", Arity: -2, Subs: []*Spec{
			{Name: "get", Arity: -2, Flags: adm, Tips: []string{"request_policy:all_nodes", nd}, Run: slowlogGet},
			{Name: "help", Arity: 2, Flags: Loading | Stale, Run: slowlogHelp},
			{Name: "len", Arity: 2, Flags: adm, Tips: []string{"request_policy:all_nodes", "response_policy:agg_sum", nd}, Run: slowlogLen},
			{Name: "reset", Arity: 2, Flags: adm, Tips: []string{"request_policy:all_nodes", "response_policy:all_succeeded"}, Run: slowlogReset},
		}},
		{Name: "latency", Arity: -2, Subs: []*Spec{
			{Name: "doctor", Arity: 2, Flags: lat, Tips: special, Run: latencyDoctor},
			{Name: "graph", Arity: 3, Flags: lat, Tips: special, Run: latencyGraph},
			{Name: "help", Arity: 2, Flags: Loading | Stale, Run: latencyHelp},
			{Name: "histogram", Arity: -2, Flags: lat, Tips: special, Run: latencyHistogram},
			{Name: "history", Arity: 3, Flags: lat, Tips: special, Run: latencyHistory},
			{Name: "latest", Arity: 2, Flags: lat, Tips: special, Run: latencyLatest},
			{Name: "reset", Arity: -2, Flags: lat, Tips: []string{"request_policy:all_nodes", "response_policy:agg_sum"}, Run: latencyReset},
		}},
		{Name: "monitor", Arity: 1, Flags: lat, Run: monitorCmd},
	}
}

// slowlogGet is SLOWLOG GET [count]: the newest count entries (default 10,
// -1 all), each [id, time, microseconds, arguments, ip:port, name].
func slowlogGet(c *Ctx) {
	count := int64(10)
	if len(c.Argv) > 3 { // the table's arity is -2; Redis's own check is 2 or 3
		c.Error("ERR unknown subcommand or wrong number of arguments for '" + truncArg(c.Argv[1]) + "'. Try SLOWLOG HELP.")
		return
	}
	if len(c.Argv) == 3 {
		n, ok := resp.ParseInt(c.Argv[2])
		if !ok || n < -1 {
			c.Error("ERR count should be greater than or equal to -1")
			return
		}
		count = n
	}
	entries := c.Srv.Slowlog().Newest(int(min(count, 1<<31)))
	c.W.ArrayLen(len(entries))
	for _, e := range entries {
		c.W.ArrayLen(6)
		c.W.Int(e.ID)
		c.W.Int(e.Time)
		c.W.Int(e.DurUs)
		c.W.ArrayLen(len(e.Args))
		for _, a := range e.Args {
			c.W.Bulk(a)
		}
		c.W.BulkString(e.Peer)
		c.W.BulkString(e.Client)
	}
}

func slowlogLen(c *Ctx) { c.W.Int(int64(c.Srv.Slowlog().Len())) }

func slowlogReset(c *Ctx) {
	c.Srv.Slowlog().Reset()
	c.W.SimpleString("OK")
}

func slowlogHelp(c *Ctx) {
	writeHelp(c, "SLOWLOG",
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.")
}

// latencyLatest is LATENCY LATEST: [event, time, latest ms, max ms] for each
// event recorded since the last reset.
func latencyLatest(c *Ctx) {
	all := c.Srv.Latency().All()
	c.W.ArrayLen(len(all))
	for _, s := range all {
		last := s.Latest()
		c.W.ArrayLen(4)
		c.W.BulkString(s.Event)
		c.W.Int(last.Time)
		c.W.Int(last.Ms)
		c.W.Int(s.Max)
	}
}

// latencyHistory is LATENCY HISTORY event: its [time, ms] samples, oldest
// first (none for an unknown event).
func latencyHistory(c *Ctx) {
	s, ok := c.Srv.Latency().Get(string(c.Argv[2]))
	if !ok {
		c.W.ArrayLen(0)
		return
	}
	samples := s.Samples()
	c.W.ArrayLen(len(samples))
	for _, sm := range samples {
		c.W.ArrayLen(2)
		c.W.Int(sm.Time)
		c.W.Int(sm.Ms)
	}
}

// latencyGraph is LATENCY GRAPH event: the event's samples as an ASCII
// sparkline (verbatim text).
func latencyGraph(c *Ctx) {
	s, ok := c.Srv.Latency().Get(string(c.Argv[2]))
	if !ok {
		c.Error("ERR No samples available for event '" + string(c.Argv[2]) + "'")
		return
	}
	c.W.Verbatim("txt", s.Graph(c.Srv.NowUs()/1e6))
}

// latencyReset is LATENCY RESET [event ...]: how many events it dropped.
func latencyReset(c *Ctx) {
	l := c.Srv.Latency()
	if len(c.Argv) == 2 {
		c.W.Int(int64(l.Reset("", true)))
		return
	}
	n := 0
	for _, ev := range c.Argv[2:] {
		n += l.Reset(string(ev), false)
	}
	c.W.Int(int64(n))
}

func latencyDoctor(c *Ctx) { c.W.Verbatim("txt", c.Srv.LatencyDoctor()) }

// latencyHistogram is LATENCY HISTOGRAM [command ...]: for each command with
// calls recorded (all, or those named: a container names its subcommands
// too, unknown names are skipped), {calls, histogram_usec} where the
// histogram maps each power-of-two bucket's upper bound in microseconds to
// the cumulative count.
func latencyHistogram(c *Ctx) {
	var specs []*Spec
	t := c.Srv.Table()
	if len(c.Argv) == 2 {
		for _, s := range t.All() {
			specs = append(specs, s)
			specs = append(specs, s.Subs...)
		}
	} else {
		for _, name := range c.Argv[2:] {
			s := lookupFullName(t, name)
			if s == nil {
				continue
			}
			specs = append(specs, s)
			specs = append(specs, s.Subs...)
		}
	}
	type row struct {
		spec  *Spec
		calls int64
		cdf   [][2]int64
	}
	var rows []row
	for _, s := range specs {
		if calls, cdf, ok := c.Srv.LatencyHistogram(s); ok {
			rows = append(rows, row{s, calls, cdf})
		}
	}
	c.W.MapLen(len(rows))
	for _, r := range rows {
		c.W.BulkString(r.spec.FullName())
		c.W.MapLen(2)
		c.W.BulkString("calls")
		c.W.Int(r.calls)
		c.W.BulkString("histogram_usec")
		c.W.MapLen(len(r.cdf))
		for _, b := range r.cdf {
			c.W.Int(b[0])
			c.W.Int(b[1])
		}
	}
}

func latencyHelp(c *Ctx) {
	writeHelp(c, "LATENCY",
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"GRAPH <event>",
		"    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]",
		"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.")
}

// monitorCmd is MONITOR: the client receives, from now on, a line for each
// command the server runs (introspect.MonitorLine). A client that may not
// block (inside EXEC) is refused; a replica or a client already monitoring
// gets no reply.
func monitorCmd(c *Ctx) {
	if c.Client.DenyBlocking {
		c.Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	if c.Srv.Monitor(c.Client, true) {
		c.W.SimpleString("OK")
	}
}

// lookupFullName finds a command by its name or a subcommand by
// "container|sub" (Redis's lookupCommandBySds).
func lookupFullName(t *Table, name []byte) *Spec {
	parent, sub, isSub := strings.Cut(string(name), "|")
	s := t.Lookup([]byte(parent))
	if s == nil || !isSub {
		return s
	}
	if strings.Contains(sub, "|") {
		return nil
	}
	return s.Sub([]byte(sub))
}
