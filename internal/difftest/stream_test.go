package difftest

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestDiffStreamRandom sends a seeded random stream of stream commands to both
// servers, in RESP2 and then RESP3, with small node limits so that streams
// span many nodes (whose boundaries decide what MAXLEN ~ and MINID ~ trim),
// and compares the replies byte for byte. IDs are explicit (never "*", which
// follows each server's clock); the times that do show (XPENDING idle times)
// are masked: idle times of XPENDING, XINFO CONSUMERS and CLAIM, and
// every Unix time in milliseconds. The commands cover Redis 8.2's deletion
// policies (KEEPREF, DELREF, ACKED; XDELEX, XACKDEL), 8.4's XREADGROUP CLAIM and
// 8.6's XCFGSET and XIDMPRECORD. XADD IDMP needs "*" (its IDs follow the
// clock: stream.golden has it), BLOCK is tested over TCP in internal/server.
func TestDiffStreamRandom(t *testing.T) {
	p := newPair(t)
	p.same("FLUSHALL")
	rng := rand.New(rand.NewPCG(11, 2026))
	keys := []string{"s1", "s2", "s3", "str", "nokey"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	groups := []string{"g1", "g2", "nog"}
	group := func() string { return groups[rng.IntN(len(groups))] }
	consumers := []string{"alice", "bob", "carol"}
	consumer := func() string { return consumers[rng.IntN(len(consumers))] }
	// the next ID to add per key (explicit IDs keep replies deterministic)
	next := map[string][2]uint64{}
	addID := func(k string) string {
		n := next[k]
		switch rng.IntN(10) {
		case 0: // an ID that is not greater: an error
			return strconv.FormatUint(n[0]/2, 10) + "-" + strconv.FormatUint(n[1], 10)
		case 1, 2: // a new millisecond
			n[0] += 1 + uint64(rng.IntN(5))
			n[1] = 0
			next[k] = n
			return strconv.FormatUint(n[0], 10) + "-*"
		case 3:
			n[0] += uint64(rng.IntN(3))
			n[1]++
			next[k] = n
			return strconv.FormatUint(n[0], 10) + "-*"
		}
		if rng.IntN(4) == 0 {
			n[0]++
			n[1] = 0
		} else {
			n[1] += 1 + uint64(rng.IntN(3))
		}
		next[k] = n
		return strconv.FormatUint(n[0], 10) + "-" + strconv.FormatUint(n[1], 10)
	}
	// an ID around the ones used (existing or not)
	anyID := func(k string) string {
		n := next[k]
		switch rng.IntN(12) {
		case 0:
			return "-"
		case 1:
			return "+"
		case 2:
			return "0"
		case 3:
			return "abc"
		}
		ms := uint64(0)
		if n[0] > 0 {
			ms = uint64(rng.Int64N(int64(n[0]) + 2))
		}
		if rng.IntN(4) == 0 {
			return strconv.FormatUint(ms, 10)
		}
		return strconv.FormatUint(ms, 10) + "-" + strconv.Itoa(rng.IntN(6))
	}
	exclusive := func(id string) string {
		if rng.IntN(4) == 0 {
			return "(" + id
		}
		return id
	}
	fields := func(a []string) []string {
		for n := 1 + rng.IntN(3); n > 0; n-- {
			switch rng.IntN(8) {
			case 0:
				a = append(a, "f"+strconv.Itoa(rng.IntN(3)), strconv.FormatInt(rng.Int64()>>uint(rng.IntN(63)), 10))
			case 1:
				a = append(a, "big", strings.Repeat("v", 60+rng.IntN(200)))
			case 2:
				a = append(a, strconv.Itoa(rng.IntN(100)), "")
			default:
				a = append(a, "name", "v"+strconv.Itoa(rng.IntN(20)))
			}
		}
		return a
	}
	count := func() string { return []string{"0", "1", "2", "3", "5", "10", "-1", "x"}[rng.IntN(8)] }
	policy := func(a []string) []string {
		switch rng.IntN(6) {
		case 0:
			return append(a, "KEEPREF")
		case 1:
			return append(a, "DELREF")
		case 2:
			return append(a, "ACKED")
		}
		return a
	}
	trim := func(k string, a []string) []string {
		a = policy(a)
		switch rng.IntN(12) {
		case 0:
			a = append(a, "MAXLEN", []string{"=", "~", "0"}[rng.IntN(3)])
			if a[len(a)-1] == "0" {
				return a
			}
			a = append(a, strconv.Itoa(rng.IntN(120)))
		case 1:
			a = append(a, "MINID", []string{"=", "~", "="}[rng.IntN(3)], anyID(k))
			if a[len(a)-1] == "+" || a[len(a)-1] == "-" {
				a[len(a)-1] = "0-1"
			}
		case 2:
			a = append(a, "MAXLEN", "~", strconv.Itoa(rng.IntN(120)), "LIMIT", []string{"0", "1", "5", "20", "-1"}[rng.IntN(5)])
		case 3:
			a = append(a, "MAXLEN", strconv.Itoa(20+rng.IntN(150)))
		}
		return a
	}
	iids := 0
	cmds := []func() []string{
		func() []string {
			k := key()
			a := []string{"XADD", k}
			if rng.IntN(6) == 0 {
				a = append(a, "NOMKSTREAM")
			}
			a = trim(k, a)
			return fields(append(a, addID(k)))
		},
		func() []string { k := key(); return fields([]string{"XADD", k, addID(k)}) },
		func() []string { k := key(); return fields([]string{"XADD", k, addID(k)}) },
		func() []string { k := key(); return fields([]string{"XADD", k, addID(k)}) },
		func() []string { k := key(); return fields([]string{"XADD", k, addID(k)}) },
		func() []string { return []string{"XLEN", key()} },
		func() []string {
			k := key()
			a := []string{"XRANGE", k, exclusive(anyID(k)), exclusive(anyID(k))}
			if rng.IntN(2) == 0 {
				a = append(a, "COUNT", count())
			}
			return a
		},
		func() []string { return []string{"XRANGE", key(), "-", "+"} },
		func() []string {
			k := key()
			a := []string{"XREVRANGE", k, exclusive(anyID(k)), exclusive(anyID(k))}
			if rng.IntN(2) == 0 {
				a = append(a, "COUNT", count())
			}
			return a
		},
		func() []string {
			k := key()
			a := []string{"XDEL", k}
			for n := 1 + rng.IntN(3); n > 0; n-- {
				a = append(a, anyID(k))
			}
			return a
		},
		func() []string { k := key(); return trim(k, []string{"XTRIM", k}) },
		func() []string {
			k1, k2 := key(), key()
			a := []string{"XREAD"}
			if rng.IntN(2) == 0 {
				a = append(a, "COUNT", count())
			}
			ids := []string{anyID(k1), anyID(k2)}
			for i, id := range ids {
				if id == "+" || id == "-" || rng.IntN(6) == 0 {
					ids[i] = "$"
				}
			}
			return append(a, "STREAMS", k1, k2, ids[0], ids[1])
		},
		func() []string {
			k := key()
			id := []string{"$", "0", anyID(k)}[rng.IntN(3)]
			if id == "+" {
				id = "-"
			}
			a := []string{"XGROUP", "CREATE", k, group(), id}
			if rng.IntN(3) == 0 {
				a = append(a, "MKSTREAM")
			}
			return a
		},
		func() []string {
			k := key()
			id := []string{"$", "0", anyID(k)}[rng.IntN(3)]
			return []string{"XGROUP", "SETID", k, group(), id}
		},
		func() []string { return []string{"XGROUP", "DESTROY", key(), group()} },
		func() []string { return []string{"XGROUP", "CREATECONSUMER", key(), group(), consumer()} },
		func() []string { return []string{"XGROUP", "DELCONSUMER", key(), group(), consumer()} },
		func() []string {
			k := key()
			id := ">"
			if rng.IntN(3) == 0 {
				id = anyID(k)
				if id == "+" || id == "-" {
					id = "0"
				}
			}
			a := []string{"XREADGROUP", "GROUP", group(), consumer()}
			if rng.IntN(2) == 0 {
				a = append(a, "COUNT", count())
			}
			if rng.IntN(5) == 0 {
				a = append(a, "NOACK")
			}
			return append(a, "STREAMS", k, id)
		},
		func() []string {
			k := key()
			a := []string{"XACK", k, group()}
			for n := 1 + rng.IntN(3); n > 0; n-- {
				a = append(a, anyID(k))
			}
			return a
		},
		func() []string { return []string{"XPENDING", key(), group()} },
		func() []string {
			k := key()
			a := []string{"XPENDING", k, group()}
			if rng.IntN(3) == 0 {
				a = append(a, "IDLE", "0")
			}
			a = append(a, exclusive(anyID(k)), exclusive(anyID(k)), count())
			if rng.IntN(2) == 0 {
				a = append(a, consumer())
			}
			return a
		},
		func() []string {
			k := key()
			a := []string{"XCLAIM", k, group(), consumer(), "0"}
			for n := 1 + rng.IntN(3); n > 0; n-- {
				a = append(a, anyID(k))
			}
			switch rng.IntN(6) {
			case 0:
				a = append(a, "JUSTID")
			case 1:
				a = append(a, "FORCE")
			case 2:
				a = append(a, "RETRYCOUNT", strconv.Itoa(rng.IntN(5)))
			case 3:
				a = append(a, "LASTID", anyID(k))
			}
			return a
		},
		func() []string {
			k := key()
			a := []string{"XAUTOCLAIM", k, group(), consumer(), "0", exclusive(anyID(k))}
			if rng.IntN(2) == 0 {
				a = append(a, "COUNT", []string{"1", "2", "5", "0"}[rng.IntN(4)])
			}
			if rng.IntN(3) == 0 {
				a = append(a, "JUSTID")
			}
			return a
		},
		func() []string { return []string{"XINFO", "STREAM", key()} },
		func() []string { return []string{"XINFO", "STREAM", key(), "FULL", "COUNT", count()} },
		func() []string { return []string{"XINFO", "GROUPS", key()} },
		func() []string { return []string{"XINFO", "CONSUMERS", key(), group()} },
		func() []string {
			k := key()
			a := policy([]string{"XDELEX", k})
			a = append(a, "IDS", "2", anyID(k), anyID(k))
			return a
		},
		func() []string {
			k := key()
			a := policy([]string{"XACKDEL", k, group()})
			return append(a, "IDS", "1", anyID(k))
		},
		func() []string {
			k := key()
			a := []string{"XREADGROUP", "GROUP", group(), consumer(), "CLAIM", []string{"0", "0", "1", "100000", "-1"}[rng.IntN(5)]}
			if rng.IntN(2) == 0 {
				a = append(a, "COUNT", count())
			}
			return append(a, "STREAMS", k, ">")
		},
		func() []string {
			k := key()
			a := []string{"XCFGSET", k}
			if rng.IntN(2) == 0 {
				a = append(a, "IDMP-DURATION", []string{"1", "100", "0", "86400"}[rng.IntN(4)])
			}
			if rng.IntN(2) == 0 {
				a = append(a, "IDMP-MAXSIZE", []string{"1", "100", "3", "10001"}[rng.IntN(4)])
			}
			return a
		},
		func() []string {
			// a new iid each time: whether an older record is still there
			// depends on each server's sweep (see tracked below)
			k := key()
			iids++
			return []string{"XIDMPRECORD", k, "p" + strconv.Itoa(rng.IntN(2)), "i" + strconv.Itoa(iids), anyID(k)}
		},
		func() []string {
			k := key()
			n := next[k]
			a := []string{"XSETID", k, strconv.FormatUint(n[0]+1, 10) + "-0"}
			if rng.IntN(2) == 0 {
				a = append(a, "ENTRIESADDED", strconv.Itoa(rng.IntN(200)))
			}
			next[k] = [2]uint64{n[0] + 1, 0}
			return a
		},
		func() []string { return []string{"DEBUG", "DIGEST-VALUE", key()} },
		func() []string { return []string{"TYPE", key()} },
		func() []string {
			if rng.IntN(10) == 0 {
				return []string{"DEL", key()}
			}
			return []string{"XLEN", key()}
		},
	}
	idle := regexp.MustCompile(`(\*4\r\n\$[0-9]+\r\n[0-9]+-[0-9]+\r\n\$[0-9]+\r\n[a-z]+\r\n):[0-9]+\r\n`)
	mask := func(s string) string { return idle.ReplaceAllString(s, "$1:IDLE\r\n") }
	// XINFO CONSUMERS' idle and inactive, CLAIM's idle, Unix times in ms
	consIdle := regexp.MustCompile(`(\$(4\r\nidle|8\r\ninactive)\r\n):-?[0-9]+\r\n`)
	claimIdle := regexp.MustCompile(`(\*4\r\n\$[0-9]+\r\n[0-9]+-[0-9]+\r\n\*[0-9]+\r\n(?:\$[0-9]+\r\n[^\r]*\r\n)*):[0-9]+\r\n`)
	unixMs := regexp.MustCompile(`:1[0-9]{12}\r\n`)
	// IDMP records name entry IDs of a few ms after 1970: each server forgets
	// them at its own once-a-second sweep, so the counts of live records are
	// masked (stream.golden and stream.tcl check them)
	tracked := regexp.MustCompile(`(\$12\r\n(pids|iids)-tracked\r\n):[0-9]+\r\n`)
	maskTimes := func(s string) string {
		s = tracked.ReplaceAllString(s, "$1:N\r\n")
		s = consIdle.ReplaceAllString(s, "$1:IDLE\r\n")
		s = claimIdle.ReplaceAllString(s, "$1:IDLE\r\n")
		return unixMs.ReplaceAllString(s, ":MS\r\n")
	}
	longest := 0
	for _, proto := range []string{"2", "3"} {
		p.do("HELLO", proto) // the replies name different versions
		for i := 0; i < 4000 && !t.Failed(); i++ {
			if i%100 == 0 {
				p.same("SET", "str", "x") // keep a key of another type around
			}
			if i%400 == 0 { // vary the node limits
				p.same("CONFIG", "SET", "stream-node-max-entries", []string{"3", "100", "5", "1", "0", "7"}[(i/400)%6])
				p.same("CONFIG", "SET", "stream-node-max-bytes", []string{"4096", "100", "0", "300"}[(i/400)%4])
			}
			args := cmds[rng.IntN(len(cmds))]()
			if args[0] == "DEL" && args[1] != "str" {
				delete(next, args[1])
			}
			hk, rd := p.do(args...)
			switch args[0] {
			case "XPENDING":
				hk, rd = mask(hk), mask(rd)
			case "XINFO", "XREADGROUP":
				hk, rd = maskTimes(hk), maskTimes(rd)
			}
			if hk != rd {
				t.Errorf("%s\n hotkv %s\n redis %s", strings.Join(args, " "), hotkvtest.Escape(hk), hotkvtest.Escape(rd))
			}
			if args[0] == "XLEN" && strings.HasPrefix(hk, ":") {
				n, _ := strconv.Atoi(strings.TrimSpace(hk[1:]))
				longest = max(longest, n)
			}
		}
		for _, k := range keys {
			p.same("XRANGE", k, "-", "+")
			p.same("XINFO", "GROUPS", k)
			if hk, rd := p.do("XINFO", "STREAM", k); maskTimes(hk) != maskTimes(rd) {
				t.Errorf("XINFO STREAM %s\n hotkv %s\n redis %s", k, hotkvtest.Escape(hk), hotkvtest.Escape(rd))
			}
		}
	}
	t.Logf("longest stream: %d", longest)
	if longest < 30 {
		t.Errorf("the longest stream seen had %d entries: the stream does not exercise nodes", longest)
	}
}
