// Package engine is HotKV's one serialisation point: it owns the keyspace, freezes
// the time for each execution unit, supplies the seeded random source, and runs
// the active expiry cycle (docs/ARCHITECTURE.md §1, §4).
//
// Lock order: Engine.mu is taken before any server-level lock (clients registry);
// never the other way round.
package engine

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/keyspace"
)

// Engine serialises every command that touches the keyspace.
type Engine struct {
	mu    sync.Mutex
	ks    *keyspace.Keyspace
	clock clock.Clock
	rng   *rand.PCG

	activeExpire atomic.Bool
	lent         atomic.Bool
	// Stats of the active expiry cycle, read by INFO under the lock.
	ExpireCycleTimeUs   int64
	ExpireCycleCapHits  int64
	ExpiredStalePercent float64
	nextDB              int
	lastIdmpUs          int64 // when ExpireIdmp last ran (Unix µs)
	// LatencyEvent, when set, is told each expiry cycle's duration in ms
	// (the latency monitor's expire-cycle event). Lock held.
	LatencyEvent func(event string, ms int64)
}

// New returns an engine over ks that reads time from clk and draws random numbers
// from a source seeded with seed.
func New(ks *keyspace.Keyspace, clk clock.Clock, seed uint64) *Engine {
	e := &Engine{ks: ks, clock: clk, rng: new(rand.PCG)}
	e.Reseed(seed)
	e.activeExpire.Store(true)
	return e
}

// Lock takes the serialisation point. A connection takes it once per pipelined batch.
func (e *Engine) Lock() { e.mu.Lock() }

// Lend releases the serialisation point for a moment in the middle of a long
// execution unit (a script past busy-reply-threshold) and takes it back, so that
// whoever waits for it can run. While it is lent, Lent reports true and the
// borrowers must not touch the keyspace: the unit is still in progress. Go's
// mutex hands itself to waiters that waited over a millisecond, in order, so
// each waiter gets its turn before Lend returns to the unit.
func (e *Engine) Lend() {
	e.lent.Store(true)
	e.mu.Unlock()
	runtime.Gosched()
	e.mu.Lock()
	e.lent.Store(false)
}

// LendWhile is Lend for as long as wait runs (a load waiting for the
// network): the lock is free and Lent true meanwhile, and held again when
// LendWhile returns.
func (e *Engine) LendWhile(wait func()) {
	e.lent.Store(true)
	e.mu.Unlock()
	wait()
	e.mu.Lock()
	e.lent.Store(false)
}

// Lent reports whether the lock holder is inside Lend (call with the lock held).
func (e *Engine) Lent() bool { return e.lent.Load() }

// Unlock releases it.
func (e *Engine) Unlock() { e.mu.Unlock() }

// Begin starts an execution unit: it freezes now (Unix ms) for everything the unit
// does and returns it. Call with the lock held.
func (e *Engine) Begin() int64 {
	now := e.clock.NowMs()
	e.ks.SetNow(now)
	return now
}

// BeginAt is Begin with a time the caller has just read from the engine's clock
// (Unix ms), saving a clock read per command.
func (e *Engine) BeginAt(nowMs int64) { e.ks.SetNow(nowMs) }

// Keyspace is the data; use only with the lock held.
func (e *Engine) Keyspace() *keyspace.Keyspace { return e.ks }

// Rand draws from the engine's seeded source; call with the lock held.
func (e *Engine) Rand() uint64 { return e.rng.Uint64() }

// Reseed restarts the engine's random source from seed, as New seeds it: an
// execution unit applied with the seed it first ran with draws the same
// numbers (server.Apply). Call with the lock held.
func (e *Engine) Reseed(seed uint64) { e.rng.Seed(seed, seed^0x9e3779b97f4a7c15) }

// SetActiveExpire turns the active expiry cycle on or off.
func (e *Engine) SetActiveExpire(on bool) { e.activeExpire.Store(on) }

// Redis's activeExpireCycle constants (expire.c), for active-expire-effort 1.
const (
	keysPerLoop     = 20
	acceptableStale = 10 // percent
	slowCycleCPU    = 25 // percent of each cron period
	// hashFieldsPerCycle bounds the hash fields one cycle deletes per database
	// (Redis spends a fixed field quota per cycle on db->hexpires).
	hashFieldsPerCycle = 1000
)

// RunCron runs the periodic work until ctx ends: the active expiry cycle, hz times
// per second (hz is read each tick so CONFIG SET hz applies at once), and the
// stream IDMP expiry (ExpireIdmp) once a second. tick, when
// not nil, runs on every tick with the lock held, given the tick's start (Unix µs).
func (e *Engine) RunCron(ctx context.Context, hz func() int, tick func(startUs int64)) {
	for {
		h := max(hz(), 1)
		period := time.Second / time.Duration(h)
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
		e.mu.Lock()
		if e.lent.Load() { // a long execution unit is in progress
			e.mu.Unlock()
			continue
		}
		start := e.clock.NowUs()
		if e.activeExpire.Load() && !e.expiryPaused() {
			e.ActiveExpireCycle(period * slowCycleCPU / 100)
		}
		if start-e.lastIdmpUs >= 1e6 {
			e.lastIdmpUs = start
			e.ExpireIdmp()
		}
		e.rehashStep()
		if tick != nil {
			tick(start)
		}
		e.mu.Unlock()
	}
}

// ActiveExpireCycle reclaims expired keys: per database, it samples keys that carry
// a TTL and deletes the expired ones, repeating while more than 10% of a sample was
// expired, within budget (Redis's slow cycle). First it deletes expired hash fields
// of the hashes that are due, up to hashFieldsPerCycle per database. Call with the
// lock held.
func (e *Engine) ActiveExpireCycle(budget time.Duration) {
	startUs := e.clock.NowUs()
	e.Begin()
	dbs := e.ks.DBs
	// hash fields with a deadline: each database's hashes that are due, earliest
	// first, up to a quota (keyspace.DB.ActiveExpireHashFields)
	for _, db := range dbs {
		if db.HashesWithFieldTTL() > 0 {
			db.ActiveExpireHashFields(hashFieldsPerCycle)
		}
	}
	var sampledAll, expiredAll int
	for i := 0; i < len(dbs); i++ {
		db := dbs[(e.nextDB+i)%len(dbs)]
		for db.Expires() > 0 {
			sampled, expired := db.ActiveExpireStep(keysPerLoop, e.Rand)
			sampledAll += sampled
			expiredAll += expired
			if sampled == 0 || expired*100/sampled <= acceptableStale {
				break
			}
			if time.Duration(e.clock.NowUs()-startUs)*time.Microsecond > budget {
				e.ExpireCycleCapHits++
				e.nextDB = (e.nextDB + i) % len(dbs)
				e.finishCycle(startUs, sampledAll, expiredAll)
				return
			}
		}
	}
	e.finishCycle(startUs, sampledAll, expiredAll)
}

// ExpireIdmp forgets the stream IDMP records that are due, in every
// database (Redis's handleExpiredIdmpEntries, which serverCron runs once a
// second whatever active-expire says). Call with the lock held.
func (e *Engine) ExpireIdmp() {
	e.Begin()
	for _, db := range e.ks.DBs {
		if db.IdmpStreams() > 0 {
			db.ActiveExpireIdmp()
		}
	}
}

// rehashStep gives one database with a rehash in progress 1 ms of rehashing, as
// Redis's databasesCron does with activerehashing. Call with the lock held.
func (e *Engine) rehashStep() {
	for _, db := range e.ks.DBs {
		if db.RehashFor(1000, e.clock.NowUs) {
			return
		}
	}
}

func (e *Engine) finishCycle(startUs int64, sampled, expired int) {
	dur := e.clock.NowUs() - startUs
	e.ExpireCycleTimeUs += dur
	if e.LatencyEvent != nil {
		e.LatencyEvent("expire-cycle", dur/1000)
	}
	if sampled > 0 {
		cur := float64(expired) / float64(sampled)
		e.ExpiredStalePercent = e.ExpiredStalePercent*0.95 + cur*0.05
	}
}

// expiryPaused reports whether CLIENT PAUSE suspends expiry now
// (keyspace.Keyspace.ExpiryPaused): the active cycle waits for the pause's end.
func (e *Engine) expiryPaused() bool {
	return e.ks.ExpiryPaused != nil && e.ks.ExpiryPaused()
}
