package keyspace

import (
	"strconv"
	"testing"
)

// Stash empties every database and keeps their contents (keys, TTLs,
// blessed keys) unchanged; Unstash puts them back in place of what was
// loaded meanwhile, with the expiring set working as before.
func TestStashUnstash(t *testing.T) {
	ks := New(2, 1)
	ks.SetNow(1000)
	for i := range 100 {
		k := []byte("k" + strconv.Itoa(i))
		db := ks.DBs[i%2]
		e := db.SetString(k, []byte("v"), false)
		if i%3 == 0 {
			db.SetExpire(k, e, 5000+int64(i))
		}
	}
	ks.DBs[0].Bless([]byte("k0"))
	lens, expires := [2]int{ks.DBs[0].Len(), ks.DBs[1].Len()}, [2]int{ks.DBs[0].Expires(), ks.DBs[1].Expires()}
	st := ks.Stash()
	if ks.Keys() != 0 || ks.DBs[0].Expires() != 0 || ks.DBs[0].Blessed() != 0 || st.Keys() != 100 {
		t.Fatalf("after Stash: %d keys, %d expiring, stash %d", ks.Keys(), ks.DBs[0].Expires(), st.Keys())
	}
	// a half-loaded new dataset
	e := ks.DBs[0].SetString([]byte("new"), []byte("x"), false)
	ks.DBs[0].SetExpire([]byte("new"), e, 9000)
	ks.Unstash(st)
	for i := range 2 {
		if ks.DBs[i].Len() != lens[i] || ks.DBs[i].Expires() != expires[i] {
			t.Fatalf("db %d: %d keys %d expiring, want %d %d", i, ks.DBs[i].Len(), ks.DBs[i].Expires(), lens[i], expires[i])
		}
	}
	if ks.DBs[0].Lookup([]byte("new")) != nil || !ks.DBs[0].IsBlessed("k0") {
		t.Fatal("the loaded key stayed, or the blessing went")
	}
	e = ks.DBs[0].Lookup([]byte("k0"))
	if e == nil || ks.DBs[0].ExpireAt(e) != 5000 {
		t.Fatalf("k0's TTL after Unstash: %v", e)
	}
	ks.SetNow(6000) // past every deadline: lazy expiry finds them through the restored index
	for i := 0; i < 100; i += 3 {
		if ks.DBs[i%2].Lookup([]byte("k"+strconv.Itoa(i))) != nil {
			t.Fatalf("k%d did not expire", i)
		}
	}
	if ks.DBs[0].Expires()+ks.DBs[1].Expires() != 0 {
		t.Fatalf("%d keys still expiring", ks.DBs[0].Expires()+ks.DBs[1].Expires())
	}
}
