package introspect

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Redis's own chk.c unit tests (chkTopKTest), ported, and a skewed stream.

func seeded(seed uint64) func() float64 { return rand.New(rand.NewPCG(seed, 1)).Float64 }

func find(l []TopKItem, item string) int {
	for i, it := range l {
		if it.Item != nil && string(it.Item) == item {
			return i
		}
	}
	return -1
}

func sortedDesc(l []TopKItem) bool {
	for i := 1; i < len(l); i++ {
		if l[i-1].Count < l[i].Count {
			return false
		}
	}
	return true
}

func TestTopKBasic(t *testing.T) {
	tk := NewTopK(5, 64, 0.9, seeded(1))
	for _, u := range []struct {
		item string
		w    uint64
	}{{"item1", 100}, {"item2", 200}, {"item3", 150}, {"item4", 50}, {"item5", 300}, {"item6", 75}} {
		tk.Update([]byte(u.item), u.w)
	}
	l := tk.List()
	if !sortedDesc(l) {
		t.Fatalf("not sorted: %v", l)
	}
	for _, it := range []string{"item5", "item2", "item3"} {
		if find(l, it) == -1 {
			t.Errorf("%s is not in the top 5", it)
		}
	}
	if find(l, "item5") != 0 || l[0].Count != 300 {
		t.Errorf("item5 is not first with 300: %+v", l[0])
	}
	if tk.Total != 875 {
		t.Errorf("Total %d, want 875", tk.Total)
	}
}

func TestTopKHeavierReplaceLighter(t *testing.T) {
	tk := NewTopK(5, 64, 0.9, seeded(2))
	for i, w := range []uint64{50, 60, 70, 80, 90} {
		tk.Update([]byte(fmt.Sprintf("light%d", i+1)), w)
	}
	l := tk.List()
	for i := 1; i <= 5; i++ {
		if find(l, fmt.Sprintf("light%d", i)) == -1 {
			t.Errorf("light%d is not in the initial top 5", i)
		}
	}
	if ex := tk.Update([]byte("heavy1"), 500); string(ex) != "light1" {
		t.Errorf("heavy1 expelled %q, want light1", ex)
	}
	tk.Update([]byte("heavy2"), 600)
	l = tk.List()
	if find(l, "heavy1") == -1 || find(l, "heavy2") == -1 {
		t.Errorf("the heavy items are not in the top 5: %v", l)
	}
	left := 0
	for i := 1; i <= 5; i++ {
		if find(l, fmt.Sprintf("light%d", i)) != -1 {
			left++
		}
	}
	if left != 3 {
		t.Errorf("%d light items left, want 3", left)
	}
}

func TestTopKManySmallUpdates(t *testing.T) {
	tk := NewTopK(2, 64, 0.9, seeded(3))
	tk.Update([]byte("item0"), 50)
	tk.Update([]byte("item1"), 100)
	l := tk.List()
	if find(l, "item0") == -1 || find(l, "item1") == -1 {
		t.Fatalf("item0 and item1 not both in the top 2: %v", l)
	}
	for i := 0; i < 100; i++ {
		tk.Update([]byte("item2"), 1)
	}
	l = tk.List()
	i1, i2 := find(l, "item1"), find(l, "item2")
	if i1 == -1 || i2 == -1 || find(l, "item0") != -1 {
		t.Fatalf("want item1 and item2, not item0: %v", l)
	}
	if d := int64(l[i1].Count) - int64(l[i2].Count); d <= -5 || d >= 5 {
		t.Errorf("item1 %d and item2 %d differ by 5 or more", l[i1].Count, l[i2].Count)
	}
}

// In a Zipf-like stream over many keys the heaviest keys are found, with
// counts within 5% of the truth.
func TestTopKFindsHeavyHittersInSkewedStream(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	tk := NewTopK(100, 1024, 1.08, rnd.Float64)
	truth := map[string]uint64{}
	z := rand.NewZipf(rnd, 1.2, 1, 9999)
	for i := 0; i < 200000; i++ {
		k := fmt.Sprintf("key:%d", z.Uint64())
		w := uint64(1 + rnd.IntN(20))
		truth[k] += w
		tk.Update([]byte(k), w)
	}
	l := tk.List()
	for rank := 0; rank < 10; rank++ {
		k := fmt.Sprintf("key:%d", rank)
		i := find(l, k)
		if i == -1 {
			t.Errorf("%s (true weight %d) is not in the top 100", k, truth[k])
			continue
		}
		if got := float64(l[i].Count); got > 1.05*float64(truth[k]) || got < 0.95*float64(truth[k]) {
			t.Errorf("%s counted %.0f, true %d", k, got, truth[k])
		}
	}
}

func TestHotkeysSession(t *testing.T) {
	h := NewHotkeys(HotkeysConfig{CPU: true, Net: true, Count: 3, SampleRatio: 1, DurationMs: 1000}, 5000, seeded(4))
	h.Note([][]byte{[]byte("a"), []byte("b")}, 10, 7, true)
	h.Note([][]byte{[]byte("a")}, 4, 100, true)
	h.Note(nil, 50, 50, true) // no key: nothing
	h.Note([][]byte{[]byte("c")}, 1000, 1000, false)
	if h.TimeAllUs != 1014 || h.NetAll != 1107 {
		t.Errorf("totals %d us %d bytes", h.TimeAllUs, h.NetAll)
	}
	if h.NetTop.Total != 106 || h.CPUTop.Total != 14 { // 7/2 per key is 3
		t.Errorf("tracked totals cpu %d net %d", h.CPUTop.Total, h.NetTop.Total)
	}
	top := h.Top(h.NetTop)
	if len(top) != 2 || string(top[0].Item) != "a" || top[0].Count != 103 || top[1].Count != 3 {
		t.Errorf("net top %+v", top)
	}
	if h.Expired(5999) || !h.Expired(6000) {
		t.Error("DURATION 1s: expired at the wrong time")
	}
	if h.ElapsedMs(5500) != 500 {
		t.Errorf("elapsed %d", h.ElapsedMs(5500))
	}
	h.Stop(6100)
	if h.Active || h.ElapsedMs(9999) != 1100 {
		t.Errorf("stopped: active %v elapsed %d", h.Active, h.ElapsedMs(9999))
	}
	// sampling: about 1 in 4
	s := NewHotkeys(HotkeysConfig{Net: true, Count: 1, SampleRatio: 4}, 0, seeded(5))
	n := 0
	for i := 0; i < 40000; i++ {
		if s.Sampled() {
			n++
		}
	}
	if n < 9000 || n > 11000 {
		t.Errorf("sampled %d of 40000 at 1/4", n)
	}
}

func FuzzTopK(f *testing.F) {
	f.Add([]byte("abcabcaaab"), uint8(3), uint8(4))
	f.Fuzz(func(t *testing.T, ops []byte, k, bucketsLog uint8) {
		kk := int(k%16) + 1
		tk := NewTopK(kk, 1<<(bucketsLog%7), 1.08, seeded(uint64(len(ops))))
		var total uint64
		for i := 0; i+1 < len(ops); i += 2 {
			w := uint64(ops[i+1] % 40)
			total += w
			tk.Update([]byte{ops[i] % 12}, w)
		}
		l := tk.List()
		if len(l) != kk || !sortedDesc(l) || tk.Total != total {
			t.Fatalf("list %v total %d want %d", l, tk.Total, total)
		}
		seen := map[string]bool{}
		for _, it := range l {
			if it.Item == nil {
				continue
			}
			if seen[string(it.Item)] {
				t.Fatalf("%q twice in %v", it.Item, l)
			}
			seen[string(it.Item)] = true
		}
	})
}
