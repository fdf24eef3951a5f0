package difftest

import (
	"bufio"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestDiffTrackingRandom compares the invalidation streams of client-side
// caching: a fleet of connections to each server (tracking RESP3 clients in
// the default, NOLOOP, OPTIN, OPTOUT and BCAST modes, a RESP2 client
// redirecting to a subscriber of __redis__:invalidate, a RESP3 client
// redirecting to another RESP3 connection, a plain writer) runs the same
// seeded random steps on both; after each step every connection is synced
// with a PING and everything it received (replies, invalidation pushes and
// messages, up to the PING's reply) must be byte-identical.
//
// Left out, because Redis 7.0 is not the reference there: Lua scripts (7.0
// tracks the keys a script declares, Redis 7.4+ the keys of the read-only
// commands it runs), and tracking-table-max-keys (it evicts random keys).
// Active expiry is off on both; keys expire lazily.
func TestDiffTrackingRandom(t *testing.T) {
	seed := uint64(11)
	if v, err := strconv.ParseUint(os.Getenv("TRACKSEED"), 10, 64); err == nil {
		seed = v
	}
	steps := 1500
	if v, err := strconv.Atoi(os.Getenv("TRACKSTEPS")); err == nil {
		steps = v
	}
	p := newPair(t)
	f := &fleet{t: t, p: p, conns: map[string]*fconn{}}
	f.main = &fconn{name: "w", hk: p.hk, rd: p.rd, hkbr: p.hkbr, rdbr: p.rdbr, ping: "+PONG\r\n"}
	f.conns["w"] = f.main
	f.order = []string{"w"}
	f.all("w", "FLUSHALL")
	f.all("w", "DEBUG", "SET-ACTIVE-EXPIRE", "0")

	sub := f.open("sub", 2)
	f.all("sub", "SUBSCRIBE", "__redis__:invalidate")
	sub.ping = "*2\r\n$4\r\npong\r\n$0\r\n\r\n"
	f.open("push3", 3) // a RESP3 redirection target, not subscribed
	for _, c := range []struct {
		name  string
		proto int
		args  []string
	}{
		{"t3", 3, []string{"CLIENT", "TRACKING", "on"}},
		{"noloop", 3, []string{"CLIENT", "TRACKING", "on", "noloop"}},
		{"optin", 3, []string{"CLIENT", "TRACKING", "on", "optin"}},
		{"optout", 3, []string{"CLIENT", "TRACKING", "on", "optout", "noloop"}},
		{"bcast", 3, []string{"CLIENT", "TRACKING", "on", "bcast", "prefix", "a", "prefix", "h"}},
		{"bcastall", 3, []string{"CLIENT", "TRACKING", "on", "bcast", "noloop"}},
		{"redir2", 2, []string{"CLIENT", "TRACKING", "on", "redirect", "@sub"}},
		{"redir3", 3, []string{"CLIENT", "TRACKING", "on", "redirect", "@push3"}},
	} {
		f.open(c.name, c.proto)
		f.all(c.name, c.args...)
	}

	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	keys := []string{"a1", "a2", "b1", "b2", "c1"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	reads := []func() []string{
		func() []string { return []string{"GET", key()} },
		func() []string { return []string{"MGET", key(), key()} },
		func() []string { return []string{"EXISTS", key()} },
		func() []string { return []string{"STRLEN", key()} },
		func() []string { return []string{"TYPE", key()} },
		func() []string { return []string{"HGET", "h" + key(), "f"} },
		func() []string { return []string{"GETRANGE", key(), "0", "1"} },
	}
	writes := []func() []string{
		func() []string { return []string{"SET", key(), strconv.Itoa(rng.IntN(100))} },
		func() []string { return []string{"DEL", key(), key()} },
		func() []string { return []string{"INCR", key()} },
		func() []string { return []string{"APPEND", key(), "x"} },
		func() []string { return []string{"MSET", key(), "1", key(), "2"} },
		func() []string { return []string{"HSET", "h" + key(), "f", "v"} },
		func() []string { return []string{"EXPIRE", key(), "1000"} },
		func() []string { return []string{"PERSIST", key()} },
		func() []string { return []string{"RENAME", key(), key()} },
		func() []string { return []string{"SETNX", key(), "n"} },
		func() []string { return []string{"GETDEL", key()} },
	}
	actors := []string{"w", "t3", "noloop", "optin", "optout", "bcast", "bcastall", "redir2", "redir3"}
	cmd := func() []string {
		if rng.IntN(2) == 0 {
			return reads[rng.IntN(len(reads))]()
		}
		return writes[rng.IntN(len(writes))]()
	}
	for i := 0; i < steps && !t.Failed(); i++ {
		actor := actors[rng.IntN(len(actors))]
		var sent [][]string
		switch r := rng.IntN(100); {
		case r < 70:
			sent = [][]string{cmd()}
		case r < 78: // a transaction
			sent = [][]string{{"MULTI"}}
			for n := 1 + rng.IntN(3); n > 0; n-- {
				sent = append(sent, cmd())
			}
			sent = append(sent, []string{"EXEC"})
		case r < 86: // CLIENT CACHING for the next command (an error outside OPTIN/OPTOUT)
			yes := []string{"yes", "no"}[rng.IntN(2)]
			sent = [][]string{{"CLIENT", "CACHING", yes}, reads[rng.IntN(len(reads))]()}
		case r < 90: // a key that expires lazily
			sent = [][]string{{"SET", key(), "e", "PX", "1"}}
		case r < 92:
			sent = [][]string{{[]string{"FLUSHDB", "FLUSHALL"}[rng.IntN(2)]}}
		case r < 96 && actor != "w": // tracking off and on again: the old entries stay (lazily)
			sent = [][]string{{"CLIENT", "TRACKING", "off"}, f.conns[actor].mode}
		default:
			sent = [][]string{{"PING"}}
		}
		f.step(i, actor, sent)
		if sent[0][0] == "SET" && len(sent[0]) == 5 {
			time.Sleep(3 * time.Millisecond) // let it expire on both
		}
	}
	if f.invalidations < steps/4 {
		t.Errorf("only %d invalidation messages in %d steps: the stream exercises too little", f.invalidations, steps)
	}
	t.Logf("seed %d: %d steps, %d invalidation messages, every connection's stream identical", seed, steps, f.invalidations)
}

// fleet is a set of named connection pairs, one to each server.
type fleet struct {
	t     *testing.T
	p     *pair
	main  *fconn
	conns map[string]*fconn
	order []string
	// invalidations counts the invalidation messages compared (HotKV's side)
	invalidations int
}

type fconn struct {
	name       string
	hk, rd     net.Conn
	hkbr, rdbr *bufio.Reader
	hkID, rdID string
	ping       string   // the reply PING gets
	mode       []string // the CLIENT TRACKING ON that set it up
}

// open adds a connection pair speaking proto and learns its client IDs.
func (f *fleet) open(name string, proto int) *fconn {
	c := &fconn{name: name, ping: "+PONG\r\n"}
	c.hk, c.rd = dialLike(f.t, f.p.hk), dialLike(f.t, f.p.rd)
	c.hkbr, c.rdbr = newReader(c.hk), newReader(c.rd)
	f.conns[name] = c
	f.order = append(f.order, name)
	c.hkID = strings.Trim(f.one(c, true, []string{"CLIENT", "ID"}), ":\r\n")
	c.rdID = strings.Trim(f.one(c, false, []string{"CLIENT", "ID"}), ":\r\n")
	if proto == 3 {
		f.one(c, true, []string{"HELLO", "3"})
		f.one(c, false, []string{"HELLO", "3"})
	}
	return c
}

// one sends args on one side of c and reads one reply.
func (f *fleet) one(c *fconn, hotkv bool, args []string) string {
	conn, br := c.rd, c.rdbr
	if hotkv {
		conn, br = c.hk, c.hkbr
	}
	if _, err := conn.Write(encode(args)); err != nil {
		f.t.Fatal(err)
	}
	return f.p.read(conn, br, args)
}

// all sends args on connection name to both servers ("@conn" stands for that
// connection's client ID on each) and requires the same reply.
func (f *fleet) all(name string, args ...string) {
	f.t.Helper()
	c := f.conns[name]
	if len(args) > 1 && args[0] == "CLIENT" && args[1] == "TRACKING" && args[2] == "on" {
		c.mode = args
	}
	hk, rd := f.sides(args)
	a, b := f.one(c, true, hk), f.one(c, false, rd)
	if a != b {
		f.t.Fatalf("%s %v:\n hotkv %s\n redis %s", name, args, hotkvtest.Escape(a), hotkvtest.Escape(b))
	}
}

// sides resolves "@conn" arguments for each server.
func (f *fleet) sides(args []string) (hk, rd []string) {
	hk, rd = append([]string(nil), args...), append([]string(nil), args...)
	for i, a := range args {
		if strings.HasPrefix(a, "@") {
			hk[i], rd[i] = f.conns[a[1:]].hkID, f.conns[a[1:]].rdID
		}
	}
	return hk, rd
}

// step sends the commands on actor's connections, then PINGs every
// connection and compares, connection by connection, everything each side
// received up to the PING's reply.
func (f *fleet) step(i int, actor string, cmds [][]string) {
	f.t.Helper()
	a := f.conns[actor]
	for _, args := range cmds {
		hk, rd := f.sides(args)
		if _, err := a.hk.Write(encode(hk)); err != nil {
			f.t.Fatal(err)
		}
		if _, err := a.rd.Write(encode(rd)); err != nil {
			f.t.Fatal(err)
		}
	}
	// the actor's replies first (with any pushes among them): a PING on every
	// other connection must not race with its command
	got := map[string][2]string{}
	got[actor] = [2]string{f.until(a, true, len(cmds)), f.until(a, false, len(cmds))}
	for _, name := range f.order {
		c := f.conns[name]
		for _, hotkv := range []bool{true, false} {
			conn := c.rd
			if hotkv {
				conn = c.hk
			}
			if _, err := conn.Write(encode([]string{"PING"})); err != nil {
				f.t.Fatal(err)
			}
		}
	}
	for _, name := range f.order {
		c := f.conns[name]
		hk, rd := f.untilPing(c, true), f.untilPing(c, false)
		prev := got[name]
		hk, rd = prev[0]+hk, prev[1]+rd
		f.invalidations += strings.Count(hk, "invalidate")
		if hk != rd {
			f.t.Errorf("step %d (%s %v), connection %s received:\n hotkv %s\n redis %s",
				i, actor, cmds, name, hotkvtest.Escape(hk), hotkvtest.Escape(rd))
		}
	}
}

// until reads the replies of n commands on one side of c, and the pushes
// among them: a RESP3 push ('>') or a message on a subscribed RESP2
// connection ("*3\r\n$7\r\nmessage") does not count as a reply.
func (f *fleet) until(c *fconn, hotkv bool, n int) string {
	conn, br := c.rd, c.rdbr
	if hotkv {
		conn, br = c.hk, c.hkbr
	}
	var all []byte
	for n > 0 {
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		var buf []byte
		if err := hotkvtest.ReadReplyFrom(br, &buf); err != nil {
			f.t.Fatalf("%s: reading: %v (so far %s)", c.name, err, hotkvtest.Escape(string(all)))
		}
		all = append(all, buf...)
		if buf[0] != '>' && !strings.HasPrefix(string(buf), "*3\r\n$7\r\nmessage\r\n") {
			n--
		}
	}
	return string(all)
}

// untilPing reads up to and including the reply to PING.
func (f *fleet) untilPing(c *fconn, hotkv bool) string {
	conn, br := c.rd, c.rdbr
	if hotkv {
		conn, br = c.hk, c.hkbr
	}
	var all []byte
	for {
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		var buf []byte
		if err := hotkvtest.ReadReplyFrom(br, &buf); err != nil {
			f.t.Fatalf("%s: waiting for PONG: %v (so far %s)", c.name, err, hotkvtest.Escape(string(all)))
		}
		all = append(all, buf...)
		if string(buf) == c.ping {
			return string(all)
		}
	}
}
