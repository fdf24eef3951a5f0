package keyspace

// Access tracking: what Entry.Access holds, as Redis's robj.lru field does
// (evict.c, object.c, db.c). The keyspace's AccessPolicy follows
// maxmemory-policy:
//
//   - AccessLRU (every policy but the LFU and LRM ones): the LRU clock
//     (seconds, 24 bits) of the last access. Reads (unless no-touch), writes
//     and creation set it.
//   - AccessLFU (allkeys-lfu, volatile-lfu): 16 bits of minutes (the last
//     decrement time) and an 8-bit logarithmic counter. A new key starts at
//     LFUInitVal; each access decays the counter by the minutes elapsed
//     (lfu-decay-time) and then increments it with probability
//     1/((counter-LFUInitVal)*lfu-log-factor+1).
//   - AccessLRM (allkeys-lrm, volatile-lrm, Redis 8.6): the LRU clock of the
//     last modification: creation and every signalled change (DB.Touch and
//     the DB methods that modify) set it; reads do not.
//
// Switching the policy at runtime reinterprets the word, as Redis does: LRU
// data read as LFU (and back) is meaningless until keys are accessed again.

// AccessPolicy selects what Entry.Access holds.
type AccessPolicy uint8

// Access policies.
const (
	AccessLRU AccessPolicy = iota
	AccessLFU
	AccessLRM
)

// LFUInitVal is the counter of a new key under an LFU policy (LFU_INIT_VAL).
const LFUInitVal = 5

// SetAccessPolicy selects what Entry.Access holds from now on.
func (ks *Keyspace) SetAccessPolicy(p AccessPolicy) { ks.access = p }

// AccessPolicy is the current access policy.
func (ks *Keyspace) AccessPolicy() AccessPolicy { return ks.access }

// newAccess is the Access word of a value created now (createObject).
func (ks *Keyspace) newAccess() uint32 {
	if ks.access == AccessLFU {
		return ks.lfuMinutes()<<8 | LFUInitVal
	}
	return ks.lruClock()
}

// touch records an access to e by a lookup (Redis's lookupKey without
// LOOKUP_NOTOUCH): the LRU clock, or an LFU update; nothing under LRM.
func (ks *Keyspace) touch(e *Entry) {
	switch ks.access {
	case AccessLRU:
		e.SetAccess(ks.lruClock())
	case AccessLFU:
		counter := ks.lfuDecr(e.Access())
		counter = ks.lfuLogIncr(counter)
		e.SetAccess(ks.lfuMinutes()<<8 | counter)
	}
}

// touchModified is updateLRM: under an LRM policy a modification sets the
// clock.
func (ks *Keyspace) touchModified(db int, key []byte) {
	if e, ok := ks.DBs[db].dict.Get(key); ok {
		e.SetAccess(ks.lruClock())
	}
}

// lfuMinutes is LFUGetTimeInMinutes: the frozen time in minutes, 16 bits.
func (ks *Keyspace) lfuMinutes() uint32 { return uint32(ks.now/60000) & 0xffff }

// lfuDecr is LFUDecrAndReturn: the counter of access word a after decaying
// it by one per lfu-decay-time minutes elapsed since its decrement time.
func (ks *Keyspace) lfuDecr(a uint32) uint32 {
	ldt, counter := a>>8&0xffff, a&255
	decay := ks.lfuDecayTime()
	if decay <= 0 {
		return counter
	}
	now := ks.lfuMinutes()
	var elapsed uint32
	if now >= ldt {
		elapsed = now - ldt
	} else {
		elapsed = 65535 - ldt + now
	}
	periods := uint64(elapsed) / uint64(decay)
	if periods >= uint64(counter) {
		return 0
	}
	return counter - uint32(periods)
}

// lfuLogIncr is LFULogIncr, drawing from the keyspace's seeded source.
func (ks *Keyspace) lfuLogIncr(counter uint32) uint32 {
	if counter >= 255 {
		return 255
	}
	r := float64(ks.rand()>>11) / (1 << 53)
	base := float64(counter) - LFUInitVal
	if base < 0 {
		base = 0
	}
	p := 1.0 / (base*float64(ks.lfuLogFactor()) + 1)
	if r < p {
		counter++
	}
	return counter
}

func (ks *Keyspace) lfuDecayTime() int64 {
	if ks.LFUDecayTime == nil {
		return 1
	}
	return ks.LFUDecayTime()
}

func (ks *Keyspace) lfuLogFactor() int64 {
	if ks.LFULogFactor == nil {
		return 10
	}
	return ks.LFULogFactor()
}

// rand draws from Rand, the execution unit's seeded source, or from a
// splitmix64 sequence keyed by the keyspace's seed when none is wired (a
// keyspace used on its own in tests).
func (ks *Keyspace) rand() uint64 {
	if ks.Rand != nil {
		return ks.Rand()
	}
	ks.rnd += 0x9e3779b97f4a7c15
	z := ks.rnd ^ ks.seed
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// LFUFreq is OBJECT FREQ: e's counter, decayed to now (not stored).
func (ks *Keyspace) LFUFreq(e *Entry) int64 { return int64(ks.lfuDecr(e.Access())) }

// idleMs is estimateObjectIdleTime: ms since the LRU clock in e.Access.
func (ks *Keyspace) idleMs(e *Entry) uint64 {
	now := ks.lruClock()
	if now >= e.Access() {
		return uint64(now-e.Access()) * 1000
	}
	return uint64(now+(1<<24-1-e.Access())) * 1000
}
