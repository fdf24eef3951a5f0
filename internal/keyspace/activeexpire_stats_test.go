package keyspace

import "testing"

// TestExpiredActiveCounts: keys and hash fields the active expiry cycle
// deletes count in ExpiredKeysActive and ExpiredSubkeysActive as well as
// in ExpiredKeys and ExpiredSubkeys; a key a read expires lazily counts in
// ExpiredKeys only (INFO expired_keys_active, Redis's
// stat_expiredkeys_active).
func TestExpiredActiveCounts(t *testing.T) {
	ks := New(1, 1)
	ks.SetNow(1000)
	db := ks.DBs[0]
	for _, k := range []string{"lazy", "active"} {
		db.SetString([]byte(k), []byte("v"), false)
		db.SetExpire([]byte(k), db.Lookup([]byte(k)), 1500)
	}
	ks.SetNow(2000)
	if db.Lookup([]byte("lazy")) != nil {
		t.Fatal("an expired key read as live")
	}
	if st := ks.Stats; st.ExpiredKeys != 1 || st.ExpiredKeysActive != 0 {
		t.Fatalf("after a lazy expiry: expired %d, active %d; want 1 and 0", st.ExpiredKeys, st.ExpiredKeysActive)
	}
	if _, n := db.ActiveExpireStep(20, func() uint64 { return 0 }); n != 1 {
		t.Fatal("the active step expired nothing")
	}
	if st := ks.Stats; st.ExpiredKeys != 2 || st.ExpiredKeysActive != 1 {
		t.Fatalf("after an active expiry: expired %d, active %d; want 2 and 1", st.ExpiredKeys, st.ExpiredKeysActive)
	}
}
