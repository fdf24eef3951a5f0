package keyspace

import "math"

// Eviction mechanics (Redis's evict.c): which key to evict next under a
// maxmemory policy. The server decides when to evict and how much
// (performEvictions); this file only picks keys.

// EvictPolicy is a maxmemory-policy.
type EvictPolicy uint8

// Eviction policies.
const (
	NoEviction EvictPolicy = iota
	VolatileLRU
	VolatileLFU
	VolatileLRM
	VolatileRandom
	VolatileTTL
	AllKeysLRU
	AllKeysLFU
	AllKeysLRM
	AllKeysRandom
)

var evictPolicyNames = map[string]EvictPolicy{
	"noeviction": NoEviction, "volatile-lru": VolatileLRU, "volatile-lfu": VolatileLFU,
	"volatile-lrm": VolatileLRM, "volatile-random": VolatileRandom, "volatile-ttl": VolatileTTL,
	"allkeys-lru": AllKeysLRU, "allkeys-lfu": AllKeysLFU, "allkeys-lrm": AllKeysLRM,
	"allkeys-random": AllKeysRandom,
}

// ParseEvictPolicy maps a maxmemory-policy name to its policy (noeviction
// for an unknown name: the configuration validates the names).
func ParseEvictPolicy(name string) EvictPolicy { return evictPolicyNames[name] }

// AllKeys reports whether the policy may evict keys without a TTL.
func (p EvictPolicy) AllKeys() bool { return p >= AllKeysLRU }

// Access is the access policy that p needs Entry.Access to hold.
func (p EvictPolicy) Access() AccessPolicy {
	switch p {
	case VolatileLFU, AllKeysLFU:
		return AccessLFU
	case VolatileLRM, AllKeysLRM:
		return AccessLRM
	}
	return AccessLRU
}

// EvictionPoolSize is EVPOOL_SIZE.
const EvictionPoolSize = 16

// EvictionPool holds the best candidates found across calls
// (evictionPoolEntry): ascending by score, the best candidate last. Keys are
// copies; a candidate whose key has gone since is skipped ("ghost").
type EvictionPool struct {
	e      [EvictionPoolSize]poolEntry
	nextDB int // the random policies' round robin over databases
}

type poolEntry struct {
	idle uint64 // the score: higher is a better candidate
	key  string
	db   int
	used bool
}

// Reset forgets every candidate (the pool holds key copies: a flush makes
// them ghosts anyway; this frees them).
func (p *EvictionPool) Reset() { p.e = [EvictionPoolSize]poolEntry{} }

// EvictionCandidate picks the next key to evict under policy, sampling
// samples keys per database (maxmemory-samples) with rnd, as
// performEvictions does: the LRU, LFU, LRM and TTL policies populate the pool
// from every database and take its best live entry; the random policies
// take a random key of the next database that has one. It returns false when
// no key can be evicted (no key, or for volatile-* no key with a TTL).
func (ks *Keyspace) EvictionCandidate(p *EvictionPool, policy EvictPolicy, samples int, rnd func() uint64) (*DB, string, bool) {
	switch policy {
	case NoEviction:
		return nil, "", false
	case AllKeysRandom, VolatileRandom:
		for range ks.DBs {
			p.nextDB++
			db := ks.DBs[p.nextDB%len(ks.DBs)]
			// a blessed key is never the one: a few more draws find
			// another (a database of blessed keys only gives none)
			for try := 0; try < 16; try++ {
				k, ok := "", false
				if policy == AllKeysRandom {
					k, _, ok = db.dict.Random(rnd)
				} else if n := db.expiring.len(); n > 0 {
					k, ok = db.expiring.at(int(rnd()%uint64(n))).de.key(), true
				}
				if !ok {
					break
				}
				if !db.IsBlessed(k) {
					return db, k, true
				}
			}
		}
		return nil, "", false
	}
	for empty := 0; ; {
		total := 0
		for _, db := range ks.DBs {
			n := db.dict.Len()
			if !policy.AllKeys() {
				n = db.expiring.len()
			}
			if n > 0 {
				ks.populate(p, db, policy, samples, rnd)
				total += n
			}
		}
		if total == 0 {
			return nil, "", false
		}
		if !p.any() {
			// every key sampled was blessed: after a few passes, give up
			// (a keyspace of protected keys has nothing to evict)
			if empty++; empty >= 16 {
				return nil, "", false
			}
			continue
		}
		for k := EvictionPoolSize - 1; k >= 0; k-- {
			pe := &p.e[k]
			if !pe.used {
				continue
			}
			key, db := pe.key, ks.DBs[pe.db]
			*pe = poolEntry{}
			if e, ok := db.dict.GetString(key); ok && (policy.AllKeys() || e.expIdx != 0) && !db.IsBlessed(key) {
				return db, key, true
			}
			// a ghost: deleted (or persisted) since it was sampled
		}
	}
}

// populate is evictionPoolPopulate: sample keys of db and insert the ones
// that score better than the pool's worst.
func (ks *Keyspace) populate(p *EvictionPool, db *DB, policy EvictPolicy, samples int, rnd func() uint64) {
	add := func(key string, e *Entry) {
		if db.blessed != nil && db.IsBlessed(key) {
			return // protected from eviction (BLESS)
		}
		var idle uint64
		switch policy {
		case VolatileLRU, AllKeysLRU, VolatileLRM, AllKeysLRM:
			idle = ks.idleMs(e)
		case VolatileLFU, AllKeysLFU:
			idle = 255 - uint64(ks.lfuDecr(e.Access()))
		case VolatileTTL:
			idle = math.MaxUint64 - uint64(db.ExpireAt(e))
		}
		p.insert(idle, key, db.ID)
	}
	if policy.AllKeys() {
		db.dict.Sample(samples, rnd, add)
		return
	}
	// the expiring set is a dense array: sample it uniformly
	// (dictGetSomeKeys on db->expires in Redis)
	n := db.expiring.len()
	for i := 0; i < samples && i < n; i++ {
		it := db.expiring.at(int(rnd() % uint64(n)))
		add(it.de.key(), &it.de.val)
	}
}

// any reports whether the pool holds a candidate.
func (p *EvictionPool) any() bool {
	for i := range p.e {
		if p.e[i].used {
			return true
		}
	}
	return false
}

// insert places a candidate in the pool, ascending by idle, dropping the
// worst when full (evictionPoolPopulate's insertion).
func (p *EvictionPool) insert(idle uint64, key string, db int) {
	for i := range p.e { // a key sampled again keeps one place
		if p.e[i].used && p.e[i].db == db && p.e[i].key == key {
			return
		}
	}
	k := 0
	for k < EvictionPoolSize && p.e[k].used && p.e[k].idle < idle {
		k++
	}
	switch {
	case k == 0 && p.e[EvictionPoolSize-1].used:
		return // worse than every candidate, and no room
	case k < EvictionPoolSize && !p.e[k].used:
		// an empty slot
	case !p.e[EvictionPoolSize-1].used:
		copy(p.e[k+1:], p.e[k:EvictionPoolSize-1])
	default:
		k--
		copy(p.e[:k], p.e[1:k+1])
	}
	p.e[k] = poolEntry{idle: idle, key: key, db: db, used: true} // the dict's own string: no copy
}
