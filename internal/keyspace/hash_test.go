package keyspace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

type modelField struct {
	v   string
	exp int64
}

// hashCheck verifies h against the model: same fields, values and deadlines,
// consistent counters, deadline order in a listpackex, a valid deadline heap in a
// table.
func hashCheck(t *testing.T, h *Hash, m map[string]modelField) {
	t.Helper()
	if h.Len() != len(m) {
		t.Fatalf("Len %d, model %d", h.Len(), len(m))
	}
	ttls, minExp := 0, int64(0)
	for f, mf := range m {
		v, exp, ok := h.Get([]byte(f))
		if !ok || string(v) != mf.v || exp != mf.exp {
			t.Fatalf("Get(%q) = %q %d %v, model %q %d", f, v, exp, ok, mf.v, mf.exp)
		}
		if mf.exp != 0 {
			ttls++
			if minExp == 0 || mf.exp < minExp {
				minExp = mf.exp
			}
		}
	}
	if h.FieldTTLs() != ttls || h.MinExpire() != minExp {
		t.Fatalf("FieldTTLs %d MinExpire %d, model %d %d", h.FieldTTLs(), h.MinExpire(), ttls, minExp)
	}
	var tmp hashObj
	o := h.open(&tmp)
	if h.Enc == compactInline && (o.enc != encListpack || int(h.c) != min(o.countLP(), countSaturated)) {
		t.Fatalf("inline hash: enc %d, count %d for %d fields", o.enc, h.c, o.countLP())
	}
	seen, prev, noTTL := 0, int64(0), false
	h.Range(func(f, v []byte, exp int64) bool {
		seen++
		if mf := m[string(f)]; mf.v != string(v) || mf.exp != exp {
			t.Fatalf("Range %q=%q/%d, model %q/%d", f, v, exp, mf.v, mf.exp)
		}
		if o.enc == encListpackEx {
			switch {
			case exp == 0:
				noTTL = true
			case noTTL || exp < prev:
				t.Fatalf("listpackex out of deadline order at %q (%d after %d, noTTL seen %v)", f, exp, prev, noTTL)
			}
			prev = max(prev, exp)
		}
		return true
	})
	if seen != len(m) {
		t.Fatalf("Range saw %d fields, model %d", seen, len(m))
	}
	if o.t != nil {
		for i, r := range o.t.heap {
			if int(r.x.hidx) != i+1 {
				t.Fatalf("heap slot %d has hidx %d", i, r.x.hidx)
			}
			if i > 0 && r.x.exp < o.t.heap[(i-1)/2].x.exp {
				t.Fatalf("heap order broken at %d", i)
			}
		}
		if len(o.t.heap) != ttls {
			t.Fatalf("heap has %d refs, %d fields have deadlines", len(o.t.heap), ttls)
		}
	}
}

func TestHashRandomOpsAgainstModel(t *testing.T) {
	for _, maxEntries := range []int{0, 4, 128, 512} {
		t.Run(fmt.Sprint("entries=", maxEntries), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(uint64(maxEntries), 7))
			o := HashOpts{MaxEntries: maxEntries, MaxValue: 64, Seed: 1}
			h, m := NewHash(), map[string]modelField{}
			now := int64(1000)
			for i := 0; i < 20000; i++ {
				f := fmt.Sprint("f", rnd.IntN(160))
				switch op := rnd.IntN(10); {
				case op < 4:
					v := strings.Repeat("v", rnd.IntN(8)) + fmt.Sprint(i)
					if rnd.IntN(200) == 0 {
						v = strings.Repeat("x", 65) // forces a table
					}
					keep := rnd.IntN(2) == 0
					_, had := m[f]
					if got := h.Set([]byte(f), []byte(v), keep, o); got != had {
						t.Fatalf("Set(%q) existed=%v, model %v", f, got, had)
					}
					mf := m[f]
					if !keep {
						mf.exp = 0
					}
					mf.v = v
					m[f] = mf
				case op < 6:
					_, had := m[f]
					if h.Del([]byte(f)) != had {
						t.Fatalf("Del(%q) != %v", f, had)
					}
					delete(m, f)
				case op < 9:
					exp := int64(0)
					if rnd.IntN(4) != 0 {
						exp = now + int64(rnd.IntN(50))
					}
					_, had := m[f]
					if h.SetFieldTTL([]byte(f), exp) != had {
						t.Fatalf("SetFieldTTL(%q) != %v", f, had)
					}
					if had {
						mf := m[f]
						mf.exp = exp
						m[f] = mf
					}
				default:
					now += int64(rnd.IntN(10))
					quota := 1 + rnd.IntN(5)
					var gone []string
					n := h.ExpireFields(now, quota, func(f []byte) { gone = append(gone, string(f)) })
					if n != len(gone) || n > quota {
						t.Fatalf("ExpireFields: %d, callbacks %d, quota %d", n, len(gone), quota)
					}
					for _, g := range gone {
						if mf := m[g]; mf.exp == 0 || mf.exp > now {
							t.Fatalf("expired %q with deadline %d at %d", g, mf.exp, now)
						}
						delete(m, g)
					}
					if n < quota {
						for f, mf := range m {
							if mf.exp != 0 && mf.exp <= now {
								t.Fatalf("%q (deadline %d) left at %d", f, mf.exp, now)
							}
						}
					}
				}
				hashCheck(t, h, m)
			}
		})
	}
}

func TestHashEncodings(t *testing.T) {
	o := HashOpts{MaxEntries: 3, MaxValue: 5, Seed: 1}
	h := NewHash()
	h.Set([]byte("a"), []byte("1"), false, o)
	h.Set([]byte("b"), []byte("12345"), false, o)
	h.Set([]byte("c"), []byte("3"), false, o)
	if h.Encoding() != "listpack" {
		t.Fatalf("3 small fields: %s", h.Encoding())
	}
	h.Set([]byte("a"), []byte("x"), false, o) // an update keeps the place
	var order []string
	h.Range(func(f, v []byte, _ int64) bool { order = append(order, string(f)+"="+string(v)); return true })
	if got := strings.Join(order, " "); got != "a=x b=12345 c=3" {
		t.Fatalf("listpack order after update: %s", got)
	}
	// deadlines make a listpackex, ordered by deadline, fields without one last
	h.EnableFieldTTL()
	h.SetFieldTTL([]byte("c"), 50)
	h.SetFieldTTL([]byte("b"), 70)
	h.SetFieldTTL([]byte("a"), 50) // equal deadlines: the newest first
	order = order[:0]
	h.Range(func(f, _ []byte, exp int64) bool { order = append(order, fmt.Sprint(string(f), exp)); return true })
	if got := strings.Join(order, " "); got != "a50 c50 b70" || h.Encoding() != "listpackex" {
		t.Fatalf("listpackex: %s (%s)", got, h.Encoding())
	}
	// losing a deadline (HSET without KEEPTTL, or persist) moves to the end
	h.Set([]byte("a"), []byte("y"), false, o)
	h.SetFieldTTL([]byte("c"), 0)
	order = order[:0]
	h.Range(func(f, _ []byte, exp int64) bool { order = append(order, fmt.Sprint(string(f), exp)); return true })
	if got := strings.Join(order, " "); got != "b70 a0 c0" {
		t.Fatalf("after persist: %s", got)
	}
	if h.SetFieldTTL([]byte("c"), 0); h.Encoding() != "listpackex" {
		t.Fatal("a listpackex never goes back")
	}
	// a long value converts, deadlines survive
	h.Set([]byte("d"), []byte("123456"), false, o)
	if h.Encoding() != "hashtable" || h.MinExpire() != 70 || h.Len() != 4 {
		t.Fatalf("after long value: %s min %d len %d", h.Encoding(), h.MinExpire(), h.Len())
	}
	// too many entries convert after the insert
	h2 := NewHash()
	for i := 0; i < 4; i++ {
		h2.Set([]byte{byte('a' + i)}, []byte("v"), false, o)
		if want := map[bool]string{true: "listpack", false: "hashtable"}[i < 3]; h2.Encoding() != want {
			t.Fatalf("%d fields: %s", i+1, h2.Encoding())
		}
	}
	// a lowered limit converts on the next set, even an update (hashTypeSet)
	h5 := NewHash()
	for i := 0; i < 3; i++ {
		h5.Set([]byte{byte('a' + i)}, []byte("v"), false, o)
	}
	if h5.Set([]byte("a"), []byte("w"), false, HashOpts{MaxEntries: 2, MaxValue: 5}); h5.Encoding() != "hashtable" {
		t.Fatal("an update past a lowered entry limit converts")
	}
	// PrepareSets: more pairs than entries, or a long argument
	h3 := NewHash()
	h3.PrepareSets([][]byte{[]byte("a"), []byte("1"), []byte("a"), []byte("1"), []byte("a"), []byte("1"), []byte("a"), []byte("1")}, o)
	if h3.Encoding() != "hashtable" {
		t.Fatal("4 pairs with max 3 entries must convert before the sets")
	}
	h4 := NewHash()
	if h4.PrepareSets([][]byte{[]byte("a"), []byte("12345")}, o); h4.Encoding() != "listpack" {
		t.Fatal("a value of exactly max-value bytes stays a listpack")
	}
	if h4.PrepareSets([][]byte{[]byte("abcdef"), []byte("1")}, o); h4.Encoding() != "hashtable" {
		t.Fatal("a field longer than max-value converts")
	}
}

func TestHashCloneIsDeep(t *testing.T) {
	o := HashOpts{MaxEntries: 2, MaxValue: 64, Seed: 1}
	for _, n := range []int{2, 5} {
		h := NewHash()
		for i := 0; i < n; i++ {
			h.Set([]byte(fmt.Sprint("f", i)), []byte("v"), false, o)
		}
		h.SetFieldTTL([]byte("f1"), 99)
		c := h.Clone().(*Hash)
		h.Set([]byte("f0"), []byte("changed"), false, o)
		h.SetFieldTTL([]byte("f1"), 5)
		if v, exp, _ := c.Get([]byte("f0")); string(v) != "v" || c.Encoding() != h.Encoding() {
			t.Fatalf("clone shares memory: %q %d %s", v, exp, c.Encoding())
		}
		if _, exp, _ := c.Get([]byte("f1")); exp != 99 || c.MinExpire() != 99 || c.boxed().reg != 0 {
			t.Fatalf("clone deadline %d min %d reg %d", exp, c.MinExpire(), c.boxed().reg)
		}
	}
}

// fieldObs records field expiry events.
type fieldObs struct {
	events []string
}

func (o *fieldObs) Modified(int, []byte) {}
func (o *fieldObs) Expired(int, []byte)  {}
func (o *fieldObs) Flushing(int)         {}
func (o *fieldObs) Swapping(int, int)    {}
func (o *fieldObs) FieldsExpired(db int, key []byte, _ [][]byte, deleted bool) {
	o.events = append(o.events, fmt.Sprintf("%d %s %v", db, key, deleted))
}

func newHashKey(db *DB, key string, fields map[string]int64) *Hash {
	o := db.ks.HashOpts()
	h := db.SetObject([]byte(key), KindHash, NewHash()).Obj().(*Hash)
	names := make([]string, 0, len(fields))
	for f := range fields {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		h.Set([]byte(f), []byte("v"), false, o)
		if exp := fields[f]; exp != 0 {
			h.SetFieldTTL([]byte(f), exp)
		}
	}
	db.HashFieldTTLChanged([]byte(key), h)
	return h
}

func TestActiveExpireHashFields(t *testing.T) {
	ks := New(2, 1)
	obs := &fieldObs{}
	ks.Obs = obs
	db := ks.DBs[0]
	ks.SetNow(100)
	newHashKey(db, "all", map[string]int64{"a": 150, "b": 160})
	newHashKey(db, "some", map[string]int64{"a": 170, "keep": 0, "late": 500})
	newHashKey(db, "none", map[string]int64{"x": 0})
	if db.HashesWithFieldTTL() != 2 {
		t.Fatalf("registered %d, want 2", db.HashesWithFieldTTL())
	}
	ks.SetNow(149)
	if n := db.ActiveExpireHashFields(100); n != 0 {
		t.Fatalf("nothing due yet, expired %d", n)
	}
	ks.SetNow(200)
	if n := db.ActiveExpireHashFields(1); n != 1 {
		t.Fatalf("quota 1: expired %d", n)
	}
	if n := db.ActiveExpireHashFields(100); n != 2 {
		t.Fatalf("rest: expired %d", n)
	}
	if db.Exists([]byte("all")) || !db.Exists([]byte("some")) || db.HashesWithFieldTTL() != 1 {
		t.Fatalf("after sweep: all=%v some=%v registered=%d", db.Exists([]byte("all")), db.Exists([]byte("some")), db.HashesWithFieldTTL())
	}
	if ks.Stats.ExpiredSubkeys != 3 {
		t.Fatalf("expired_subkeys %d", ks.Stats.ExpiredSubkeys)
	}
	if got := strings.Join(obs.events, ","); got != "0 all false,0 all true,0 some false" {
		t.Fatalf("events %s", got)
	}
	ks.SetNow(600)
	db.ActiveExpireHashFields(100)
	if e := db.Lookup([]byte("some")); e == nil || e.Obj().(*Hash).Len() != 1 || db.HashesWithFieldTTL() != 0 {
		t.Fatal("the field without a deadline stays, the hash leaves the registry")
	}
}

func TestHashRegistryFollowsKeys(t *testing.T) {
	ks := New(2, 1)
	db, db1 := ks.DBs[0], ks.DBs[1]
	ks.SetNow(100)
	h := newHashKey(db, "h", map[string]int64{"a": 200})
	db.Rename([]byte("h"), []byte("h2"))
	if db.HashesWithFieldTTL() != 1 || db.hfe[0].key != "h2" || h.boxed().reg != 1 {
		t.Fatalf("rename: %+v", db.hfe)
	}
	v := *db.Lookup([]byte("h2"))
	db.Delete([]byte("h2")) // MOVE
	db1.Insert([]byte("h2"), v, 0)
	if db.HashesWithFieldTTL() != 0 || db1.HashesWithFieldTTL() != 1 {
		t.Fatal("move")
	}
	c := *db1.Lookup([]byte("h2")) // COPY
	c.SetObj(c.Obj().(*Hash).Clone())
	db1.Insert([]byte("copy"), c, 0)
	if db1.HashesWithFieldTTL() != 2 {
		t.Fatal("copy")
	}
	ks.Swap(0, 1)
	if db.HashesWithFieldTTL() != 2 || db1.HashesWithFieldTTL() != 0 {
		t.Fatal("swapdb")
	}
	db.SetString([]byte("copy"), []byte("x"), false) // overwrite
	db.SetObject([]byte("h2"), KindList, &List{})
	if db.HashesWithFieldTTL() != 0 {
		t.Fatal("overwrite")
	}
	newHashKey(db, "h3", map[string]int64{"a": 200})
	db.Flush()
	if db.HashesWithFieldTTL() != 0 {
		t.Fatal("flush")
	}
	// a key-level deadline that passes first: the sweeper expires the key
	h4 := newHashKey(db, "h4", map[string]int64{"a": 200}).boxed()
	db.SetExpire([]byte("h4"), db.Lookup([]byte("h4")), 150)
	ks.SetNow(300)
	db.ActiveExpireHashFields(math.MaxInt)
	if _, ok := db.dict.Get([]byte("h4")); ok || h4.reg != 0 || ks.Stats.ExpiredKeys != 1 {
		t.Fatal("key-level expiry first")
	}
}
