package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// statMode is --stat: INFO every interval (-i, one second by default), one
// line of figures a time and the header every 20 lines, as redis-cli's
// statMode prints them (the same columns and widths, the same field lookups:
// a field is found by its name's first occurrence in INFO's text).
func (s *session) statMode() error {
	interval := s.cfg.Interval
	if interval == 0 {
		interval = time.Second
	}
	dbnum := s.databases()
	var requests int64
	for i := 0; ; i++ {
		r, err := s.reconnectingDo("INFO")
		if err != nil {
			s.errf("\nI/O error\n")
			return &errExit{1}
		}
		if r.Kind == KindError {
			s.errf("ERROR: %s\n", r.Str)
			return &errExit{1}
		}
		info := string(r.Str)
		if i%20 == 0 {
			s.out.WriteString("------- data ------ --------------------- load -------------------- - child -\n" +
				"keys       mem      clients blocked requests            connections          \n")
		}
		var keys int64
		for j := 0; j < dbnum; j++ {
			if k := longInfoField(info, "db"+strconv.Itoa(j)+":keys"); k != math.MinInt64 {
				keys += k
			}
		}
		fmt.Fprintf(s.out, "%-11d", keys)
		fmt.Fprintf(s.out, "%-8s", bytesToHuman(longInfoField(info, "used_memory")))
		fmt.Fprintf(s.out, " %-8d", longInfoField(info, "connected_clients"))
		fmt.Fprintf(s.out, "%-8d", longInfoField(info, "blocked_clients"))
		total := longInfoField(info, "total_commands_processed")
		delta := int64(0)
		if requests != 0 {
			delta = total - requests
		}
		fmt.Fprintf(s.out, "%-19s", fmt.Sprintf("%d (+%d)", total, delta))
		requests = total
		fmt.Fprintf(s.out, " %-12d", longInfoField(info, "total_connections_received"))
		// as redis-cli: fields INFO no longer has read as LONG_MIN, so the
		// child column stays empty unless all three are there
		child := longInfoField(info, "bgsave_in_progress") |
			longInfoField(info, "aof_rewrite_in_progress")<<1 | longInfoField(info, "loading")<<2
		switch child {
		case 1:
			s.out.WriteString("SAVE")
		case 2:
			s.out.WriteString("AOF")
		case 3:
			s.out.WriteString("SAVE+AOF")
		case 4:
			s.out.WriteString("LOAD")
		}
		s.out.WriteString("\n")
		s.out.Flush()
		time.Sleep(interval)
	}
}

// databases is CONFIG GET databases, 16 when it fails (redis-cli's getDatabases).
func (s *session) databases() int {
	r, err := s.reconnectingDo("CONFIG", "GET", "databases")
	if err == nil && r.Kind == KindError {
		s.errf("CONFIG GET databases fails: %s, use default value 16 instead\n", r.Str)
		return 16
	}
	if err != nil || len(r.Elems) != 2 {
		return 16
	}
	n, _ := strconv.Atoi(string(r.Elems[1].Str))
	return n
}

// infoField is redis-cli's getInfoField: the text after the first occurrence
// of field and one more byte, up to '\r' or ','; ok is false when field does
// not occur.
func infoField(info, field string) (string, bool) {
	i := strings.Index(info, field)
	if i < 0 {
		return "", false
	}
	p := info[min(i+len(field)+1, len(info)):]
	end := strings.IndexByte(p, '\r')
	if end < 0 {
		end = len(p)
	}
	if c := strings.IndexByte(p, ','); c >= 0 && c < end {
		end = c
	}
	return p[:end], true
}

// longInfoField is redis-cli's getLongInfoField: strtol of the field, LONG_MIN
// when it is missing.
func longInfoField(info, field string) int64 {
	v, ok := infoField(info, field)
	if !ok {
		return math.MinInt64
	}
	return strtol(v)
}

// strtol reads a leading base-10 integer as C's strtol (0 when there is none,
// clamped at the int64 range).
func strtol(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	digits := end
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == digits {
		return 0
	}
	n, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		if s[0] == '-' {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return n
}

// bytesToHuman is redis-cli's: 1003B, 4.03K, 100.00M, 2.32G, 3.01T.
func bytesToHuman(n int64) string {
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	const k = 1024
	switch {
	case n < k:
		return sign + strconv.FormatInt(n, 10) + "B"
	case n < k*k:
		return sign + fmt.Sprintf("%.2fK", float64(n)/k)
	case n < k*k*k:
		return sign + fmt.Sprintf("%.2fM", float64(n)/(k*k))
	case n < k*k*k*k:
		return sign + fmt.Sprintf("%.2fG", float64(n)/(k*k*k))
	case n < k*k*k*k*k:
		return sign + fmt.Sprintf("%.2fT", float64(n)/(k*k*k*k))
	}
	return sign // redis-cli leaves the buffer as it was: nothing past the sign
}

// locksMode is --locks, HotKV's own: the lock view (HOTKV.LOCKS STATS and
// LIST [MATCH --pattern] [COUNT --count, default 100]). On a terminal it
// redraws every interval (-i, one second by default) until interrupted;
// otherwise it prints once and exits.
func (s *session) locksMode() error {
	interval := s.cfg.Interval
	if interval == 0 {
		interval = time.Second
	}
	for {
		st, err := s.reconnectingDo("HOTKV.LOCKS", "STATS")
		if err != nil {
			s.errf("\nI/O error\n")
			return &errExit{1}
		}
		if st.Kind == KindError {
			s.errf("ERROR: %s\n", st.Str)
			return &errExit{1}
		}
		args := []string{"HOTKV.LOCKS", "LIST", "COUNT", "100"}
		if s.cfg.CountSet {
			args[3] = strconv.Itoa(s.cfg.Count)
		}
		if s.cfg.Pattern != "" {
			args = append(args, "MATCH", s.cfg.Pattern)
		}
		list, err := s.reconnectingDo(args...)
		if err != nil || list.Kind == KindError {
			s.errf("ERROR: %s\n", list.Str)
			return &errExit{1}
		}
		live := s.env.StdoutTTY
		if live {
			s.out.WriteString("\x1b[H\x1b[2J") // redraw from the top
		}
		s.writeLocks(pairs(st), list)
		s.out.Flush()
		if !live {
			return nil
		}
		time.Sleep(interval)
	}
}

// writeLocks renders the counters and the table.
func (s *session) writeLocks(st map[string]*Reply, list *Reply) {
	n := func(k string) int64 {
		if r := st[k]; r != nil {
			return r.Int
		}
		return 0
	}
	p99 := func(k string) string {
		if r := st[k]; r != nil {
			if q := pairs(r)["p99"]; q != nil {
				return humanUs(q.Int)
			}
		}
		return "-"
	}
	fmt.Fprintf(s.out, "held %d  acquired %d  contended %d  released %d  stale %d  extended %d  expired-while-held %d  removed %d  hold-p99 %s  wait-p99 %s\n",
		n("held"), n("acquired"), n("contended"), n("released"), n("released-stale"), n("extended"),
		n("expired-while-held"), n("removed"), p99("hold-usec"), p99("wait-usec"))
	fmt.Fprintf(s.out, "%-32s %3s  %-16s  %10s  %10s  %7s  %8s\n", "key", "db", "token digest", "age", "ttl", "refused", "extended")
	for _, e := range list.Elems {
		m := pairs(e)
		get := func(k string) *Reply {
			if r := m[k]; r != nil {
				return r
			}
			return &Reply{}
		}
		ttl := "none"
		if t := get("ttl-ms").Int; t >= 0 {
			ttl = humanUs(t * 1000)
		}
		fmt.Fprintf(s.out, "%-32s %3d  %-16s  %10s  %10s  %7d  %8d\n", strings.Trim(string(Repr(nil, get("key").Str)), `"`), get("db").Int,
			get("token-digest").Str, humanUs(get("age-ms").Int*1000), ttl, get("refused").Int, get("extended").Int)
	}
}

// pairs reads a RESP3 map or a RESP2 flat array of pairs.
func pairs(r *Reply) map[string]*Reply {
	m := map[string]*Reply{}
	for i := 0; i+1 < len(r.Elems); i += 2 {
		m[string(r.Elems[i].Str)] = r.Elems[i+1]
	}
	return m
}

// humanUs renders a duration in µs: 850us, 12.3ms, 4.56s, 3m05s.
func humanUs(us int64) string {
	switch {
	case us < 1000:
		return strconv.FormatInt(us, 10) + "us"
	case us < 1e6:
		return fmt.Sprintf("%.1fms", float64(us)/1e3)
	case us < 60e6:
		return fmt.Sprintf("%.2fs", float64(us)/1e6)
	}
	return fmt.Sprintf("%dm%02ds", us/60e6, us/1e6%60)
}
