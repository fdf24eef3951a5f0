package keyspace

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func members(s *Set) []string {
	var out []string
	s.Range(func(m []byte) bool {
		out = append(out, string(m))
		return true
	})
	return out
}

func sortedMembers(s *Set) []string {
	out := members(s)
	slices.Sort(out)
	return out
}

func newTestKS() *Keyspace { return New(1, 42) }

func addAll(ks *Keyspace, s *Set, ms ...string) int {
	n := 0
	for _, m := range ms {
		if s.Add(ks, []byte(m)) {
			n++
		}
	}
	return n
}

// t_set.c setTypeCreate: intset for an integer, listpack for a string, hashtable
// when the size hint exceeds the listpack limit.
func TestNewSetEncoding(t *testing.T) {
	ks := newTestKS()
	for _, c := range []struct {
		first string
		hint  int
		want  string
	}{
		{"1", 1, "intset"}, {"-9223372036854775808", 1, "intset"}, {"01", 1, "listpack"},
		{"-0", 1, "listpack"}, {"+1", 1, "listpack"}, {"a", 1, "listpack"}, {"1", 512, "intset"},
		{"1", 513, "hashtable"}, {"a", 128, "listpack"}, {"a", 129, "hashtable"},
		{"9223372036854775808", 1, "listpack"},
	} {
		if got := ks.NewSet([]byte(c.first), c.hint).Encoding(); got != c.want {
			t.Errorf("NewSet(%q, %d) = %s, want %s", c.first, c.hint, got, c.want)
		}
	}
}

// Intset: sorted, deduplicated, widened 16 -> 32 -> 64 bits as values need.
func TestIntsetAddRemove(t *testing.T) {
	ks := newTestKS()
	s := ks.NewIntsetSet()
	rng := rand.New(rand.NewPCG(1, 2))
	ref := map[int64]bool{}
	for i := 0; i < 400; i++ {
		var v int64
		switch rng.IntN(3) {
		case 0:
			v = int64(rng.IntN(200)) - 100
		case 1:
			v = int64(rng.Int32()) - 1<<30
		default:
			v = int64(rng.Uint64())
		}
		if got, want := s.Add(ks, []byte(strconv.FormatInt(v, 10))), !ref[v]; got != want {
			t.Fatalf("Add(%d) = %v, want %v", v, got, want)
		}
		ref[v] = true
		if rng.IntN(4) == 0 {
			for k := range ref {
				if !s.Remove([]byte(strconv.FormatInt(k, 10))) {
					t.Fatalf("Remove(%d) = false", k)
				}
				delete(ref, k)
				break
			}
		}
	}
	if s.Encoding() != "intset" || s.Len() != len(ref) {
		t.Fatalf("enc %s len %d, want intset %d", s.Encoding(), s.Len(), len(ref))
	}
	var want []int64
	for k := range ref {
		want = append(want, k)
	}
	slices.Sort(want)
	got := members(s)
	for i, v := range want {
		if got[i] != strconv.FormatInt(v, 10) {
			t.Fatalf("member %d = %s, want %d (intset must iterate ascending)", i, got[i], v)
		}
		if !s.Has([]byte(got[i])) {
			t.Fatalf("Has(%s) = false", got[i])
		}
	}
	for _, m := range []string{"01", "-0", "abc", "99999999999999999999"} {
		if s.Has([]byte(m)) || s.Remove([]byte(m)) {
			t.Errorf("non-canonical %q found in an intset", m)
		}
	}
}

func TestIntsetWidening(t *testing.T) {
	ks := newTestKS()
	s := ks.NewIntsetSet()
	addAll(ks, s, "5", "-3", "100")
	if setWidth(s) != 2 {
		t.Fatalf("width %d, want 2", setWidth(s))
	}
	addAll(ks, s, "-40000") // below int16: goes first
	if setWidth(s) != 4 || members(s)[0] != "-40000" {
		t.Fatalf("width %d members %v", setWidth(s), members(s))
	}
	addAll(ks, s, "5000000000") // above int32: goes last
	if setWidth(s) != 8 || !slices.Equal(members(s), []string{"-40000", "-3", "5", "100", "5000000000"}) {
		t.Fatalf("width %d members %v", setWidth(s), members(s))
	}
	s.Remove([]byte("5000000000"))
	if setWidth(s) != 8 { // Redis never narrows an intset
		t.Fatalf("width %d after remove, want 8", setWidth(s))
	}
}

// t_set.c setTypeAddAux: a string joining a small intset makes a listpack (the
// integers first, in ascending order); a large intset becomes a hashtable.
func TestIntsetConversions(t *testing.T) {
	ks := newTestKS()
	s := ks.NewIntsetSet()
	addAll(ks, s, "3", "1", "2")
	addAll(ks, s, "a")
	if s.Encoding() != "listpack" || !slices.Equal(members(s), []string{"1", "2", "3", "a"}) {
		t.Fatalf("%s %v", s.Encoding(), members(s))
	}

	s = ks.NewIntsetSet()
	for i := 0; i < 128; i++ {
		addAll(ks, s, strconv.Itoa(i))
	}
	addAll(ks, s, "a") // 128 integers: not < set-max-listpack-entries
	if s.Encoding() != "hashtable" || s.Len() != 129 {
		t.Fatalf("%s %d", s.Encoding(), s.Len())
	}

	s = ks.NewIntsetSet()
	for i := 0; i < 512; i++ {
		addAll(ks, s, strconv.Itoa(i))
	}
	if s.Encoding() != "intset" {
		t.Fatal(s.Encoding())
	}
	if addAll(ks, s, "0") != 0 || s.Encoding() != "intset" {
		t.Fatal("a duplicate converted the intset")
	}
	addAll(ks, s, "512")
	if s.Encoding() != "hashtable" || s.Len() != 513 {
		t.Fatalf("%s %d", s.Encoding(), s.Len())
	}

	// an integer too long for set-max-listpack-value keeps strings out of a listpack
	ks.Limits.SetMaxListpackValue = constant(3)
	s = ks.NewIntsetSet()
	addAll(ks, s, "12345", "a")
	if s.Encoding() != "hashtable" {
		t.Fatalf("%s, want hashtable (maxelelen 5 > 3)", s.Encoding())
	}
}

func TestListpackAddRemove(t *testing.T) {
	ks := newTestKS()
	s := ks.NewListpackSet()
	if addAll(ks, s, "b", "a", "b", "", "1", "01") != 5 {
		t.Fatal("wrong add count")
	}
	if !slices.Equal(members(s), []string{"b", "a", "", "1", "01"}) {
		t.Fatalf("listpack order %q", members(s))
	}
	if !s.Has([]byte("")) || !s.Has([]byte("01")) || s.Has([]byte("c")) {
		t.Fatal("Has")
	}
	if !s.Remove([]byte("a")) || s.Remove([]byte("a")) {
		t.Fatal("Remove")
	}
	addAll(ks, s, "a")
	if !slices.Equal(members(s), []string{"b", "", "1", "01", "a"}) {
		t.Fatalf("listpack order after remove+add %q", members(s))
	}
	long := string(make([]byte, 300)) // a uvarint length of two bytes
	ks.Limits.SetMaxListpackValue = constant(1000)
	addAll(ks, s, long, "z")
	if !s.Has([]byte(long)) || members(s)[5] != long || members(s)[6] != "z" {
		t.Fatal("long member")
	}
	ks.Limits.SetMaxListpackValue = constant(64)
	addAll(ks, s, string(make([]byte, 65)))
	if s.Encoding() != "hashtable" || s.Len() != 8 || !s.Has([]byte(long)) {
		t.Fatalf("%s %d", s.Encoding(), s.Len())
	}
}

func TestListpackEntriesLimit(t *testing.T) {
	ks := newTestKS()
	s := ks.NewListpackSet()
	for i := 0; i < 128; i++ {
		addAll(ks, s, "m"+strconv.Itoa(i))
	}
	if s.Encoding() != "listpack" {
		t.Fatal(s.Encoding())
	}
	addAll(ks, s, "m0")
	if s.Encoding() != "listpack" {
		t.Fatal("a duplicate converted the listpack")
	}
	addAll(ks, s, "x")
	if s.Encoding() != "hashtable" || s.Len() != 129 {
		t.Fatalf("%s %d", s.Encoding(), s.Len())
	}
}

// setTypeMaybeConvert converts on the size hint alone.
func TestMaybeConvert(t *testing.T) {
	ks := newTestKS()
	s := ks.NewListpackSet()
	addAll(ks, s, "a")
	s.MaybeConvert(ks, 128)
	if s.Encoding() != "listpack" {
		t.Fatal(s.Encoding())
	}
	s.MaybeConvert(ks, 129)
	if s.Encoding() != "hashtable" || !s.Has([]byte("a")) {
		t.Fatal(s.Encoding())
	}
	s = ks.NewIntsetSet()
	addAll(ks, s, "1")
	s.MaybeConvert(ks, 513)
	if s.Encoding() != "hashtable" || !s.Has([]byte("1")) {
		t.Fatal(s.Encoding())
	}
}

func TestToIntsetIfFits(t *testing.T) {
	ks := newTestKS()
	s := ks.NewListpackSet()
	addAll(ks, s, "30", "-5", "70000", "1")
	if !s.AllIntegers() {
		t.Fatal("AllIntegers")
	}
	s.ToIntsetIfFits(ks)
	if s.Encoding() != "intset" || !slices.Equal(members(s), []string{"-5", "1", "30", "70000"}) || setWidth(s) != 4 {
		t.Fatalf("%s %v w=%d", s.Encoding(), members(s), setWidth(s))
	}
	h := ks.NewSet([]byte("x"), 1000)
	for i := 0; i < 600; i++ {
		addAll(ks, h, strconv.Itoa(i))
	}
	h.ToIntsetIfFits(ks) // 600 > set-max-intset-entries
	if h.Encoding() != "hashtable" {
		t.Fatal(h.Encoding())
	}
	addAll(ks, h, "x")
	if h.AllIntegers() {
		t.Fatal("AllIntegers with x")
	}
}

func TestPopAndRandom(t *testing.T) {
	ks := newTestKS()
	rng := rand.New(rand.NewPCG(3, 4))
	rnd := rng.Uint64
	for _, enc := range []string{"intset", "listpack", "hashtable"} {
		var s *Set
		switch enc {
		case "intset":
			s = ks.NewIntsetSet()
		case "listpack":
			s = ks.NewListpackSet()
		default:
			s = ks.NewSet([]byte("x"), 200)
		}
		ref := map[string]bool{}
		for i := 0; i < 50; i++ {
			m := strconv.Itoa(i * 7)
			if enc != "intset" {
				m = "m" + m
			}
			addAll(ks, s, m)
			ref[m] = true
		}
		seen := map[string]bool{}
		var scratch [4]byte // too small for some members: Pop must grow it
		for i := 0; i < 2000; i++ {
			seen[string(s.Random(rnd, scratch[:0]))] = true
		}
		if len(seen) != 50 {
			t.Errorf("%s: Random reached %d of 50 members", enc, len(seen))
		}
		for s.Len() > 0 {
			m := string(s.Pop(rnd, scratch[:0]))
			if !ref[m] {
				t.Fatalf("%s: popped %q twice or never added", enc, m)
			}
			delete(ref, m)
		}
		if len(ref) != 0 {
			t.Fatalf("%s: left %v", enc, ref)
		}
	}
}

func TestPopOrderedAndSampleOrdered(t *testing.T) {
	ks := newTestKS()
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 200; trial++ {
		s := ks.NewListpackSet()
		n := 1 + rng.IntN(40)
		var all []string
		for i := 0; i < n; i++ {
			all = append(all, "e"+strconv.Itoa(i))
		}
		addAll(ks, s, all...)
		k := rng.IntN(n + 1)
		var sampled []string
		s.SampleOrdered(rng.Uint64, k, func(m []byte) { sampled = append(sampled, string(m)) })
		if len(sampled) != k || !isSubsequence(sampled, all) {
			t.Fatalf("SampleOrdered(%d of %d) = %v", k, n, sampled)
		}
		var popped []string
		s.PopOrdered(rng.Uint64, k, func(m []byte) { popped = append(popped, string(m)) })
		left := members(s)
		if len(popped) != k || !isSubsequence(popped, all) || !isSubsequence(left, all) || s.Len() != n-k {
			t.Fatalf("PopOrdered(%d of %d): popped %v left %v", k, n, popped, left)
		}
		merged := append(slices.Clone(popped), left...)
		slices.Sort(merged)
		want := slices.Clone(all)
		slices.Sort(want)
		if !slices.Equal(merged, want) {
			t.Fatalf("popped+left %v != %v", merged, want)
		}
	}
}

func isSubsequence(sub, all []string) bool {
	i := 0
	for _, a := range all {
		if i < len(sub) && sub[i] == a {
			i++
		}
	}
	return i == len(sub)
}

func TestSetClone(t *testing.T) {
	ks := newTestKS()
	for _, first := range []string{"1", "a", "big"} {
		s := ks.NewSet([]byte(first), 1)
		if first == "big" {
			s = ks.NewSet([]byte(first), 1000)
		}
		addAll(ks, s, first, "2", "3")
		c := s.Clone().(*Set)
		addAll(ks, c, "zz")
		if c.Encoding() == s.Encoding() && s.Has([]byte("zz")) {
			t.Fatalf("%s: clone shares memory", first)
		}
		want := []string{"2", "3", first}
		slices.Sort(want)
		if !slices.Equal(sortedMembers(s), want) {
			t.Fatalf("%s: original changed: %v", first, members(s))
		}
	}
}

// The SCAN contract on a hashtable set: every member present for the whole scan
// is reported, however the table grows or shrinks between steps.
func TestSetScanStep(t *testing.T) {
	ks := newTestKS()
	s := ks.NewSet([]byte("x"), 200)
	for i := 0; i < 300; i++ {
		addAll(ks, s, "k"+strconv.Itoa(i))
	}
	seen := map[string]bool{}
	cursor, step := uint64(0), 0
	for {
		cursor = s.ScanStep(cursor, func(m []byte) { seen[string(m)] = true })
		step++
		if step == 5 {
			for i := 300; i < 1000; i++ { // grow during the scan
				addAll(ks, s, "k"+strconv.Itoa(i))
			}
		}
		if step == 40 {
			for i := 300; i < 1000; i++ { // and shrink
				s.Remove([]byte("k" + strconv.Itoa(i)))
			}
		}
		if cursor == 0 {
			break
		}
	}
	for i := 0; i < 300; i++ {
		if !seen["k"+strconv.Itoa(i)] {
			t.Fatalf("k%d missed by the scan", i)
		}
	}
}

// The hot paths (SADD of an existing member, SISMEMBER, SPOP on a compact set)
// do not allocate.
func TestSetHotPathAllocs(t *testing.T) {
	ks := newTestKS()
	lp := ks.NewListpackSet()
	is := ks.NewIntsetSet()
	ht := ks.NewSet([]byte("x"), 1000)
	for i := 0; i < 100; i++ {
		addAll(ks, lp, "m"+strconv.Itoa(i))
		addAll(ks, is, strconv.Itoa(i))
		addAll(ks, ht, "m"+strconv.Itoa(i))
	}
	m, n := []byte("m57"), []byte("57")
	rnd := rand.New(rand.NewPCG(1, 1)).Uint64
	// Add's argument escapes (a hashtable keeps it), so pop-push reuses one
	// buffer: SPOP replies from a stack buffer, SADD adds the request's bytes
	heap := make([]byte, 0, 64)
	for name, f := range map[string]func(){
		"has":      func() { lp.Has(m); is.Has(n); ht.Has(m) },
		"add-dup":  func() { lp.Add(ks, m); is.Add(ks, n); ht.Add(ks, m) },
		"pop-push": func() { lp.Add(ks, lp.Pop(rnd, heap)); is.Add(ks, is.Pop(rnd, heap)) },
		"random":   func() { var b [24]byte; lp.Random(rnd, b[:0]); is.Random(rnd, b[:0]); ht.Random(rnd, b[:0]) },
	} {
		if a := testing.AllocsPerRun(200, f); a != 0 {
			t.Errorf("%s: %.1f allocations, want 0", name, a)
		}
	}
}

// Reserve changes nothing but the allocation: the same members, encoding and
// intset width as adding the members to an unreserved set.
func TestSetReserveSameResult(t *testing.T) {
	ks := newTestKS()
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 500 {
		n := 2 + r.IntN(200)
		members := make([][]byte, n)
		for i := range members {
			switch k := r.IntN(10); {
			case k < 6 || round%3 == 0:
				members[i] = []byte(strconv.FormatInt(r.Int64N(1<<uint(1+r.IntN(62)))-(1<<20), 10))
			case k < 8:
				members[i] = []byte("m" + strconv.Itoa(r.IntN(50)))
			default:
				members[i] = bytes.Repeat([]byte("x"), r.IntN(80))
			}
		}
		a, b := ks.NewSet(members[0], n), ks.NewSet(members[0], n)
		b.Reserve(ks, members)
		for _, m := range members {
			if a.Add(ks, m) != b.Add(ks, m) {
				t.Fatalf("round %d: Add(%q) differs", round, m)
			}
		}
		if a.Encoding() != b.Encoding() || setWidth(a) != setWidth(b) || a.Len() != b.Len() ||
			!slices.EqualFunc(a.Members(nil), b.Members(nil), bytes.Equal) {
			t.Fatalf("round %d: %s/%d/%d vs %s/%d/%d", round, a.Encoding(), setWidth(a), a.Len(), b.Encoding(), setWidth(b), b.Len())
		}
	}
}

// setWidth is an intset's width in bytes, 0 for other encodings.
func setWidth(s *Set) int {
	if s.SetEnc() != SetIntset {
		return 0
	}
	w, _ := s.IntsetRaw()
	return w
}
