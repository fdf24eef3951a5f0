package command

import (
	"github.com/hotkv/hotkv/internal/glob"
	"github.com/hotkv/hotkv/internal/locks"
	"github.com/hotkv/hotkv/internal/resp"
)

// locksCommands is HOTKV.LOCKS, HotKV's own command (no Redis has one; the
// prefix keeps it clear of any command Redis may add): the server's view of
// the distributed locks taken with it (internal/locks; docs/observability.md).
func locksCommands() []*Spec {
	ro := Loading | Stale
	nd := []string{"nondeterministic_output"}
	return []*Spec{
		{Name: "hotkv.locks", Arity: -2, Subs: []*Spec{
			{Name: "help", Arity: 2, Flags: ro, Run: locksHelp},
			{Name: "list", Arity: -2, Flags: ro, ACL: []string{"@slow"}, Tips: nd, Run: locksList},
			{Name: "reset", Arity: 2, Flags: Admin | NoScript | Loading | Stale, Run: locksReset},
			{Name: "stats", Arity: 2, Flags: ro, ACL: []string{"@slow"}, Tips: nd, Run: locksStats},
			{Name: "top", Arity: -2, Flags: ro, ACL: []string{"@slow"}, Tips: nd, Run: locksTop},
		}},
	}
}

func locksHelp(c *Ctx) {
	writeHelp(c, "HOTKV.LOCKS",
		"LIST [COUNT <count>] [MATCH <pattern>]",
		"    The locks held now (keys taken with SET NX and an expiry), oldest first:",
		"    key, db, token digest (as DIGEST), age and TTL in milliseconds, attempts",
		"    refused and extensions while held. COUNT 0 lists all (default: 100).",
		"STATS",
		"    The counters since the start or the last reset: acquired, contended,",
		"    released, released-stale, extended, expired-while-held, removed, and the",
		"    hold and wait times (microseconds).",
		"TOP [COUNT <count>]",
		"    The most active lock keys (acquisitions and refusals), with their counters",
		"    (default: 10).",
		"RESET",
		"    Reset the counters (as CONFIG RESETSTAT); the locks held stay.")
}

// locksOpts parses [COUNT n] [MATCH pattern] (MATCH only when match is set).
func locksOpts(c *Ctx, count int64, match bool) (n int64, pattern []byte, ok bool) {
	n = count
	for i := 2; i < len(c.Argv); i += 2 {
		if i+1 >= len(c.Argv) {
			c.Err(ErrSyntax)
			return 0, nil, false
		}
		switch a := c.Argv[i]; {
		case eqFold(a, "count"):
			v, ok := resp.ParseInt(c.Argv[i+1])
			if !ok || v < 0 {
				c.Error("ERR count should be greater than or equal to 0")
				return 0, nil, false
			}
			n = v
		case match && eqFold(a, "match"):
			pattern = c.Argv[i+1]
		default:
			c.Err(ErrSyntax)
			return 0, nil, false
		}
	}
	return n, pattern, true
}

// locksList is HOTKV.LOCKS LIST.
func locksList(c *Ctx) {
	n, pattern, ok := locksOpts(c, 100, true)
	if !ok {
		return
	}
	all := c.Srv.Locks().Locks()
	out := all[:0]
	for _, l := range all {
		if pattern != nil && !glob.MatchString(string(pattern), l.Key, false) {
			continue
		}
		out = append(out, l)
		if n > 0 && int64(len(out)) == n {
			break
		}
	}
	c.W.ArrayLen(len(out))
	var d [16]byte
	for _, l := range out {
		ttl := int64(-1)
		if e := c.KS.DBs[l.DB].Peek([]byte(l.Key)); e != nil {
			if at := c.KS.DBs[l.DB].ExpireAt(e); at != 0 {
				ttl = max(at-c.Now, 0)
			}
		}
		c.W.MapLen(7)
		c.W.Bulk([]byte("key"))
		c.W.Bulk([]byte(l.Key))
		c.W.Bulk([]byte("db"))
		c.W.Int(int64(l.DB))
		c.W.Bulk([]byte("token-digest"))
		c.W.Bulk(appendHash(d[:0], l.Digest)) // as DIGEST prints it
		c.W.Bulk([]byte("age-ms"))
		c.W.Int(max(c.Now-l.AcquiredUs/1000, 0))
		c.W.Bulk([]byte("ttl-ms"))
		c.W.Int(ttl)
		c.W.Bulk([]byte("refused"))
		c.W.Int(l.Refusals)
		c.W.Bulk([]byte("extended"))
		c.W.Int(l.Extends)
	}
}

// writeCounters appends a counters map's pairs (7 of them).
func writeCounters(c *Ctx, k *locks.Counters) {
	pairs := []struct {
		name string
		v    int64
	}{
		{"acquired", k.Acquired}, {"contended", k.Contended}, {"released", k.Released},
		{"released-stale", k.Stale}, {"extended", k.Extended},
		{"expired-while-held", k.ExpiredHeld}, {"removed", k.Removed},
	}
	for _, p := range pairs {
		c.W.Bulk([]byte(p.name))
		c.W.Int(p.v)
	}
}

// writeHist appends a histogram as a map: count, sum, p50, p99, p99.9 (µs).
func writeHist(c *Ctx, h *locks.Histogram) {
	c.W.MapLen(5)
	c.W.Bulk([]byte("count"))
	c.W.Int(h.Count)
	c.W.Bulk([]byte("sum-usec"))
	c.W.Int(h.SumUs)
	for _, q := range []struct {
		name string
		q    float64
	}{{"p50", 0.5}, {"p99", 0.99}, {"p99.9", 0.999}} {
		c.W.Bulk([]byte(q.name))
		c.W.Int(int64(h.Quantile(q.q)))
	}
}

// locksStats is HOTKV.LOCKS STATS.
func locksStats(c *Ctx) {
	t := c.Srv.Locks()
	c.W.MapLen(11)
	c.W.Bulk([]byte("held"))
	c.W.Int(int64(t.Len()))
	writeCounters(c, &t.C)
	c.W.Bulk([]byte("hold-usec"))
	writeHist(c, &t.Hold)
	c.W.Bulk([]byte("wait-usec"))
	wait := t.Wait()
	writeHist(c, &wait)
	c.W.Bulk([]byte("keys-tracked"))
	c.W.Int(int64(t.Keys()))
}

// locksTop is HOTKV.LOCKS TOP.
func locksTop(c *Ctx) {
	n, _, ok := locksOpts(c, 10, false)
	if !ok {
		return
	}
	if n == 0 {
		n = -1
	}
	top := c.Srv.Locks().Top(int(min(n, 1<<31)))
	c.W.ArrayLen(len(top))
	for _, k := range top {
		c.W.MapLen(10)
		c.W.Bulk([]byte("key"))
		c.W.Bulk([]byte(k.Key))
		c.W.Bulk([]byte("db"))
		c.W.Int(int64(k.DB))
		c.W.Bulk([]byte("held"))
		c.W.Int(b2i(k.Held))
		writeCounters(c, &k.Counters)
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// locksReset is HOTKV.LOCKS RESET.
func locksReset(c *Ctx) {
	c.Srv.Locks().Reset()
	c.W.SimpleString("OK")
}
