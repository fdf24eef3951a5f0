// Package crashtest is the AOF's crash harness (issue 26, deliverable 9;
// cmd/hotkv-crash runs it, a short run is a test): a write load of SET NX PX
// locks, INCRs and list pushes from several clients against a hotkv process
// with appendonly yes, SIGKILL at a random moment, a restart on the same
// directory, and a check of every reply the server acknowledged, against a
// model of what was acknowledged across every cycle so far:
//
//   - a lock acknowledged OK is there with its token while its deadline is
//     ahead (its remaining TTL within the deadline's bounds: absolute
//     deadlines survive the restart), and gone once it passed;
//   - a counter is never behind the last value an INCR returned, nor ahead
//     of the INCRs sent;
//   - a list holds 1..n in order, n at least the last acknowledged push and
//     at most the pushes sent;
//   - a counter is never behind a value a GET from another client returned,
//     nor a lock missing that a refused SET NX PX from another client saw
//     held (while its deadline is ahead): no reply may show what a crash
//     can lose.
//
// With appendfsync always nothing acknowledged may be missing. With everysec
// a kill -9 loses nothing either (the bytes are written before the reply:
// only a power loss loses the last second), so a loss is reported with its
// age and fails the run only when it is older than the everysec window (2 s).
// Torn runs cut the last commands of the AOF at every byte offset and check
// that each loads as a prefix.
package crashtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Config is one run.
type Config struct {
	Bin     string        // the hotkv binary
	Dir     string        // the server's dir (the AOF is in it)
	Fsync   string        // appendfsync: always, everysec, no
	Cycles  int           // kill and restart this many times
	Clients int           // concurrent writers
	MinRun  time.Duration // each cycle runs a random time in [MinRun, MaxRun) before the kill
	MaxRun  time.Duration
	Seed    uint64
	Log     io.Writer // progress, one line per cycle (nil: none)
	// Torn: after the cycles, cut the incremental file at every byte offset
	// of its last TornCmds commands and check each loads as a prefix.
	TornCmds int
	// ExtraArgs are more server arguments (after the harness's own: the
	// harness's test turns the AOF off with them to see a loss caught).
	ExtraArgs []string
}

// Report is what a run saw.
type Report struct {
	Cycles       int
	Acked        int64 // acknowledged writes over the run
	Locks        int   // locks in the model at the end
	Lost         int   // acknowledged writes missing after a restart
	LostInWindow int   // of those, acknowledged within the everysec window before the kill
	ExpiredOK    int   // locks whose deadline passed and that were gone, as they must be
	TornLoads    int   // torn files that loaded as a prefix
	ReadsChecked int   // values shown by a GET or a refused SET NX, checked after a restart
	MaxLoad      time.Duration
}

// model is what the server acknowledged; mu guards it.
type model struct {
	mu       sync.Mutex
	locks    map[string]lockRec
	counters map[string]*seqRec
	lists    map[string]*seqRec
	acked    int64
	lastKill time.Time
	clients  int
	reads    int // what verify checked of what reads showed
	// refused are the locks another client saw held: its SET NX PX was
	// refused while the model had no acknowledgement of them yet or had one
	refused map[string]time.Time
}

type lockRec struct {
	token      string
	lo, hi     int64 // the absolute deadline (Unix ms) is within [lo, hi]
	ackedAt    time.Time
	ttlMs      int64
	cycleAcked int
}

// seqRec is a counter or a list: sent is how many INCRs or pushes went out,
// acked the highest value acknowledged, ackedAt when.
type seqRec struct {
	sent, acked int64
	ackedAt     time.Time
	seen        int64 // the highest value a GET returned (counters)
	seenAt      time.Time
}

// lock TTLs: some expire while the server is down or restarting, some hold.
var lockTTLs = []int64{300, 1500, 5000, 60_000, 600_000}

// lockTTL is the TTL of a client's i-th lock (its key ends in i).
func lockTTL(i int) int64 { return lockTTLs[i%len(lockTTLs)] }

// Run runs the harness.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if cfg.Clients <= 0 {
		cfg.Clients = 8
	}
	if cfg.MaxRun <= cfg.MinRun {
		cfg.MaxRun = cfg.MinRun + 500*time.Millisecond
	}
	logf := func(format string, args ...any) {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, format+"\n", args...)
		}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	m := &model{locks: map[string]lockRec{}, counters: map[string]*seqRec{}, lists: map[string]*seqRec{},
		clients: cfg.Clients}
	var rep Report
	for cycle := 1; cycle <= cfg.Cycles; cycle++ {
		srv, err := start(ctx, cfg)
		if err != nil {
			return rep, fmt.Errorf("cycle %d: %w", cycle, err)
		}
		rep.MaxLoad = max(rep.MaxLoad, srv.loadTime)
		// check what the previous cycles acknowledged
		if cycle > 1 {
			lost, inWindow, expired, err := m.verify(ctx, srv.client, cfg.Fsync)
			if err != nil {
				srv.kill()
				return rep, fmt.Errorf("cycle %d: verify: %w", cycle, err)
			}
			rep.Lost += lost
			rep.LostInWindow += inWindow
			rep.ExpiredOK += expired
			rep.ReadsChecked = m.reads
			if lost > inWindow || (cfg.Fsync == "always" && lost > 0) {
				srv.kill()
				return rep, fmt.Errorf("cycle %d: %d acknowledged writes lost (%d within the everysec window), log: %s",
					cycle, lost, inWindow, srv.logPath)
			}
		}
		run := cfg.MinRun + time.Duration(rng.Int64N(int64(cfg.MaxRun-cfg.MinRun)))
		loadCtx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for c := 0; c < cfg.Clients; c++ {
			wg.Add(1)
			seed := rng.Uint64() // drawn here: rng is not safe for the goroutines
			go func(c int) {
				defer wg.Done()
				m.load(loadCtx, srv.addr, cycle, c, seed)
			}(c)
		}
		time.Sleep(run)
		killedAt := time.Now()
		srv.kill() // SIGKILL while the clients write
		stop()
		wg.Wait()
		m.mu.Lock()
		m.markKill(killedAt)
		rep.Acked = m.acked
		rep.Locks = len(m.locks)
		m.mu.Unlock()
		rep.Cycles = cycle
		logf("cycle %d: ran %v, acknowledged %d writes so far, lost %d, load %v", cycle, run.Round(time.Millisecond), rep.Acked, rep.Lost, srv.loadTime.Round(time.Millisecond))
	}
	// the last kill's survivors
	srv, err := start(ctx, cfg)
	if err != nil {
		return rep, fmt.Errorf("final start: %w", err)
	}
	lost, inWindow, expired, err := m.verify(ctx, srv.client, cfg.Fsync)
	srv.kill()
	if err != nil {
		return rep, fmt.Errorf("final verify: %w", err)
	}
	rep.Lost += lost
	rep.LostInWindow += inWindow
	rep.ExpiredOK += expired
	rep.ReadsChecked = m.reads
	if lost > inWindow || (cfg.Fsync == "always" && lost > 0) {
		return rep, fmt.Errorf("final: %d acknowledged writes lost (%d within the everysec window)", lost, inWindow)
	}
	if cfg.TornCmds > 0 {
		n, err := torn(ctx, cfg)
		rep.TornLoads = n
		if err != nil {
			return rep, fmt.Errorf("torn: %w", err)
		}
	}
	return rep, nil
}

// killWindow is how far back from the kill an everysec loss may reach.
const killWindow = 2 * time.Second

// markKill remembers the last kill time (for the everysec window).
func (m *model) markKill(at time.Time) { m.lastKill = at }

// load is one client's write load until ctx ends.
func (m *model) load(ctx context.Context, addr string, cycle, c int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(c)))
	cl := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second, PoolSize: 1})
	defer cl.Close()
	counter := fmt.Sprintf("counter:%d", c)
	list := fmt.Sprintf("list:%d", c)
	for i := 0; ctx.Err() == nil; i++ {
		switch rng.IntN(5) {
		case 0:
			key := fmt.Sprintf("lock:%d:%d:%d", cycle, c, i)
			tok := strconv.FormatUint(rng.Uint64(), 36)
			ttl := lockTTL(i) // known from the key: contenders (case 4) rely on it
			sent := time.Now()
			ok, err := cl.SetNX(context.Background(), key, tok, time.Duration(ttl)*time.Millisecond).Result()
			if err != nil {
				return
			}
			done := time.Now()
			if ok {
				m.mu.Lock()
				m.locks[key] = lockRec{token: tok, lo: sent.UnixMilli() + ttl, hi: done.UnixMilli() + ttl, ackedAt: done, ttlMs: ttl, cycleAcked: cycle}
				m.acked++
				m.mu.Unlock()
			}
		case 1:
			m.mu.Lock()
			r := m.counters[counter]
			if r == nil {
				r = &seqRec{}
				m.counters[counter] = r
			}
			r.sent++
			m.mu.Unlock()
			v, err := cl.Incr(context.Background(), counter).Result()
			if err != nil {
				return
			}
			m.mu.Lock()
			if v > r.acked {
				r.acked, r.ackedAt = v, time.Now()
			}
			m.acked++
			m.mu.Unlock()
		case 2:
			m.mu.Lock()
			r := m.lists[list]
			if r == nil {
				r = &seqRec{}
				m.lists[list] = r
			}
			r.sent++
			next := r.sent
			m.mu.Unlock()
			n, err := cl.RPush(context.Background(), list, next).Result()
			if err != nil {
				return
			}
			m.mu.Lock()
			if n > r.acked {
				r.acked, r.ackedAt = n, time.Now()
			}
			m.acked++
			m.mu.Unlock()
		case 3: // read another client's counter
			other := fmt.Sprintf("counter:%d", rng.IntN(m.clients))
			v, err := cl.Get(context.Background(), other).Int64()
			if err != nil && !errors.Is(err, redis.Nil) {
				return
			}
			m.mu.Lock()
			r := m.counters[other]
			if r == nil {
				r = &seqRec{}
				m.counters[other] = r
			}
			if v > r.seen {
				r.seen, r.seenAt = v, time.Now()
			}
			m.mu.Unlock()
		case 4: // contend for a long-held lock another client may have taken
			j := i - i%len(lockTTLs) + len(lockTTLs) - 1 - len(lockTTLs)*rng.IntN(2)
			if j < 0 || lockTTL(j) < 600_000 {
				continue
			}
			key := fmt.Sprintf("lock:%d:%d:%d", cycle, rng.IntN(m.clients), j)
			sent := time.Now()
			ok, err := cl.SetNX(context.Background(), key, "contender", 600*time.Second).Result()
			if err != nil {
				return
			}
			done := time.Now()
			m.mu.Lock()
			if ok { // nobody held it: the contender holds it now
				m.locks[key] = lockRec{token: "contender", lo: sent.UnixMilli() + 600_000, hi: done.UnixMilli() + 600_000, ackedAt: done, ttlMs: 600_000, cycleAcked: cycle}
				m.acked++
			} else if _, known := m.locks[key]; !known {
				if m.refused == nil {
					m.refused = map[string]time.Time{}
				}
				m.refused[key] = time.Now()
			}
			m.mu.Unlock()
		}
	}
}

// verify checks the restarted server against the model. A lock whose
// deadline is within a margin of now is not judged (it may just have
// expired). After the check the model follows the server: what was sent but
// not acknowledged and is there counts as acknowledged.
func (m *model) verify(ctx context.Context, cl *redis.Client, fsync string) (lost, inWindow, expiredOK int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	const margin = 250 // ms
	miss := func(ackedAt time.Time) {
		lost++
		if fsync != "always" && m.lastKill.Sub(ackedAt) < killWindow {
			inWindow++
		}
	}
	keys := make([]string, 0, len(m.locks))
	for k := range m.locks {
		keys = append(keys, k)
	}
	for start := 0; start < len(keys); start += 500 {
		batch := keys[start:min(start+500, len(keys))]
		pipe := cl.Pipeline()
		gets := make([]*redis.StringCmd, len(batch))
		ttls := make([]*redis.Cmd, len(batch))
		for i, k := range batch {
			gets[i] = pipe.Get(ctx, k)
			ttls[i] = pipe.Do(ctx, "PEXPIRETIME", k)
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return 0, 0, 0, err
		}
		now := time.Now().UnixMilli()
		for i, k := range batch {
			rec := m.locks[k]
			v, gerr := gets[i].Result()
			switch {
			case rec.hi+margin < now: // expired: must be gone
				if gerr == nil {
					return 0, 0, 0, fmt.Errorf("%s: expired at %d (now %d) but still there", k, rec.hi, now)
				}
				expiredOK++
				delete(m.locks, k)
			case rec.lo-margin > now: // held: must be there, with its deadline
				if errors.Is(gerr, redis.Nil) {
					miss(rec.ackedAt)
					delete(m.locks, k)
					continue
				}
				if v != rec.token {
					return 0, 0, 0, fmt.Errorf("%s = %q, acknowledged %q", k, v, rec.token)
				}
				at, _ := ttls[i].Int64()
				if at < rec.lo-1 || at > rec.hi+1 {
					return 0, 0, 0, fmt.Errorf("%s: deadline %d outside [%d, %d]", k, at, rec.lo, rec.hi)
				}
			}
		}
	}
	for k, at := range m.refused {
		if _, acked := m.locks[k]; acked {
			delete(m.refused, k) // checked with the locks
			continue
		}
		// a refused SET NX showed it held, with 600 s to run: it must be
		// there, though its holder never heard so
		_, err := cl.Get(ctx, k).Result()
		m.reads++
		if errors.Is(err, redis.Nil) {
			miss(at)
		} else if err != nil {
			return 0, 0, 0, err
		}
		delete(m.refused, k)
	}
	for k, r := range m.counters {
		v, err := cl.Get(ctx, k).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return 0, 0, 0, err
		}
		if v > r.sent {
			return 0, 0, 0, fmt.Errorf("%s = %d, ahead of the %d INCRs sent", k, v, r.sent)
		}
		if v < r.acked {
			miss(r.ackedAt)
		}
		if r.seen > 0 {
			m.reads++
		}
		if v < r.seen { // a read showed a value the crash lost
			miss(r.seenAt)
		}
		r.acked, r.sent, r.seen = v, v, v // the model follows the server from here
	}
	for k, r := range m.lists {
		vals, err := cl.LRange(ctx, k, 0, -1).Result()
		if err != nil {
			return 0, 0, 0, err
		}
		for i, s := range vals {
			if s != strconv.Itoa(i+1) {
				return 0, 0, 0, fmt.Errorf("%s[%d] = %q, want %d (not a prefix of the pushes)", k, i, s, i+1)
			}
		}
		n := int64(len(vals))
		if n > r.sent {
			return 0, 0, 0, fmt.Errorf("%s has %d elements, %d pushed", k, n, r.sent)
		}
		if n < r.acked {
			miss(r.ackedAt)
		}
		r.acked, r.sent = n, n
	}
	return lost, inWindow, expiredOK, nil
}

// server is one hotkv process.
type server struct {
	cmd      *exec.Cmd
	addr     string
	client   *redis.Client
	logPath  string
	loadTime time.Duration
	exited   chan error
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start runs the server on cfg.Dir and waits until it answers PING (the
// AOF loaded).
func start(ctx context.Context, cfg Config, extra ...string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(cfg.Dir, "hotkv.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	args := append([]string{"--port", strconv.Itoa(port), "--dir", cfg.Dir, "--appendonly", "yes",
		"--appendfsync", cfg.Fsync, "--save", ""}, extra...)
	args = append(args, cfg.ExtraArgs...)
	cmd := exec.CommandContext(ctx, cfg.Bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logf.Close() }()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cl := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	s := &server{cmd: cmd, addr: addr, client: cl, logPath: logPath, exited: exited}
	for {
		select {
		case err := <-exited:
			cl.Close()
			return nil, fmt.Errorf("hotkv exited while starting: %v (log: %s)", err, logPath)
		default:
		}
		if cl.Ping(ctx).Err() == nil {
			s.loadTime = time.Since(t0)
			return s, nil
		}
		if time.Since(t0) > 60*time.Second {
			_ = cmd.Process.Kill()
			cl.Close()
			return nil, errors.New("hotkv did not answer within 60 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill is kill -9.
func (s *server) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
	}
	s.client.Close()
}
