package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/keyspace"
)

// The active cycle reclaims expired keys that nobody reads, and never a live one.
func TestActiveExpireCycleReclaims(t *testing.T) {
	clk := clock.NewFake(1_000_000)
	ks := keyspace.New(2, 1)
	e := New(ks, clk, 42)
	e.Lock()
	defer e.Unlock()
	e.Begin()
	db := ks.DBs[0]
	for i := 0; i < 1000; i++ {
		k := []byte(fmt.Sprintf("k%d", i))
		ent := db.SetString(k, []byte("v"), false)
		ttl := int64(100)
		if i%2 == 0 {
			ttl = 100_000 // these must survive
		}
		db.SetExpire(k, ent, ks.Now()+ttl)
	}
	clk.Advance(time.Second)
	for i := 0; i < 200 && db.Len() > 500; i++ {
		e.ActiveExpireCycle(time.Hour)
	}
	if db.Len() != 500 {
		t.Fatalf("after active expiry: %d keys, want 500", db.Len())
	}
	if ks.Stats.ExpiredKeys != 500 {
		t.Fatalf("expired_keys %d", ks.Stats.ExpiredKeys)
	}
}

// The cron finishes a rehash that no command drives any more.
func TestCronFinishesRehash(t *testing.T) {
	ks := keyspace.New(1, 1)
	e := New(ks, clock.New(), 1)
	e.Lock()
	e.Begin()
	db := ks.DBs[0]
	// the grow from 4096 to 8192 buckets starts at the 4096th insert; the 904
	// inserts after it move only about as many buckets
	for i := 0; i < 5000; i++ {
		db.SetString([]byte(fmt.Sprint("k", i)), []byte("v"), false)
	}
	if !db.Rehashing() {
		e.Unlock()
		t.Fatal("setup: expected a rehash in progress")
	}
	e.Unlock()
	for i := 0; i < 1000 && db.Rehashing(); i++ {
		e.Lock()
		e.rehashStep()
		e.Unlock()
	}
	if db.Rehashing() {
		t.Fatal("the cron never finished the rehash")
	}
	if db.Len() != 5000 {
		t.Fatalf("keys lost: %d", db.Len())
	}
}

// The cycle also reclaims hash fields whose deadline passed, up to its quota per
// database per cycle, and deletes hashes left empty.
func TestActiveExpireCycleReclaimsHashFields(t *testing.T) {
	clk := clock.NewFake(1_000_000)
	ks := keyspace.New(2, 1)
	e := New(ks, clk, 42)
	e.Lock()
	defer e.Unlock()
	e.Begin()
	o := ks.HashOpts()
	for dbi, db := range ks.DBs {
		for i := 0; i < 3; i++ {
			k := []byte(fmt.Sprintf("h%d", i))
			h := db.SetObject(k, keyspace.KindHash, keyspace.NewHash()).Obj().(*keyspace.Hash)
			for f := 0; f < 1000; f++ {
				h.Set([]byte(fmt.Sprint("f", f)), []byte("v"), false, o)
				if i != 2 || f%2 == 0 { // h2 keeps its odd fields
					h.SetFieldTTL([]byte(fmt.Sprint("f", f)), ks.Now()+int64(100+f+dbi))
				}
			}
			db.HashFieldTTLChanged(k, h)
		}
	}
	clk.Advance(time.Hour)
	e.ActiveExpireCycle(time.Hour)
	if got := ks.Stats.ExpiredSubkeys; got != 2*hashFieldsPerCycle {
		t.Fatalf("one cycle expired %d fields, want the quota %d per database", got, hashFieldsPerCycle)
	}
	for i := 0; i < 10; i++ {
		e.ActiveExpireCycle(time.Hour)
	}
	for _, db := range ks.DBs {
		if db.Len() != 1 || db.HashesWithFieldTTL() != 0 {
			t.Fatalf("db%d: %d keys, %d registered hashes; want only h2, unregistered", db.ID, db.Len(), db.HashesWithFieldTTL())
		}
		if e := db.Lookup([]byte("h2")); e == nil || e.Obj().(*keyspace.Hash).Len() != 500 {
			t.Fatalf("db%d: h2 should keep its 500 fields without a deadline", db.ID)
		}
	}
	if ks.Stats.ExpiredSubkeys != 2*2500 {
		t.Fatalf("expired_subkeys %d, want 5000", ks.Stats.ExpiredSubkeys)
	}
}
