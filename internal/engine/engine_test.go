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
