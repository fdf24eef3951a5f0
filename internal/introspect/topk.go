package introspect

import (
	"math"
	"slices"

	"github.com/zeebo/xxh3"
)

// TopK is Redis's chkTopK (chk.c): the Cuckoo Heavy Keeper of Ngo and
// Papatriantafilou, with a min-heap beside it that keeps the names of the
// top k items (RedisBloom's idea). It counts weighted updates of items in
// fixed memory: two cuckoo tables of buckets, each bucket with two heavy
// entries (a 16-bit fingerprint and a count) and one lobby entry where a
// newcomer waits (count below 16) until it is promoted. A lobby collision
// decays the resident with probability decay^-count. HOTKEYS keeps one per
// metric (CPU time, network bytes).
//
// The port is faithful, operation for operation, so that its answers are
// Redis's: the same hashes (XXH3, seed 0 for the tables and 1919 for the
// heap), the same promotion, kick-out and decay rules. Randomness is an
// input: rnd returns a number in [0, 1], as C's rand()/RAND_MAX.
type TopK struct {
	tables     [topkTables][]topkBucket
	heap       []TopKItem // min-heap by Count; Item nil while unused
	lutExp     [topkLUT + 1]float64
	lutMin     [topkLUT + 1]float64
	lutProb    [topkLUT + 1]float64
	Total      uint64 // the sum of every update's weight
	k          int
	numBuckets int
	rnd        func() float64
	heapBytes  int // the item names the heap holds
}

// TopKItem is one of the top items: its name and its (estimated) count.
type TopKItem struct {
	Count uint64
	Item  []byte
	fp    uint64
}

const (
	topkLUT          = 256
	topkTables       = 2
	topkHeavyPerBkt  = 2
	topkLobbyPromote = 16    // LOBBY_PROMOTION_THRESHOLD
	topkMaxKicks     = 16    // MAX_KICKS
	topkHeavyRatio   = 0.008 // HEAVY_RATIO
	topkHeapSeed     = 1919  // HEAP_SEED
)

type topkHeavy struct {
	count uint64
	fp    uint16
}

type topkBucket struct {
	heavy      [topkHeavyPerBkt]topkHeavy
	lobbyFP    uint16
	lobbyCount uint8
}

// NewTopK is chkTopKCreate: k items kept by name, numBuckets (a power of 2)
// buckets per table, decay the decay base (the paper's 1.08).
func NewTopK(k, numBuckets int, decay float64, rnd func() float64) *TopK {
	if k <= 0 || numBuckets <= 0 || numBuckets&(numBuckets-1) != 0 {
		panic("introspect: NewTopK needs k > 0 and a power-of-2 bucket count")
	}
	t := &TopK{k: k, numBuckets: numBuckets, rnd: rnd, heap: make([]TopKItem, k)}
	for i := range t.tables {
		t.tables[i] = make([]topkBucket, numBuckets)
	}
	inv := 1 / decay
	for i := 1; i <= topkLUT; i++ {
		t.lutExp[i] = t.lutExp[i-1] + math.Pow(decay, float64(i-1))
		t.lutMin[i] = t.lutExp[i] - t.lutExp[i-1]
		t.lutProb[i] = math.Pow(inv, float64(i))
	}
	return t
}

// MemBytes estimates the memory t holds as Redis's chkTopKGetMemoryUsage
// counts it (its tables, heap and the names in it).
func (t *TopK) MemBytes() int {
	const bucketBytes, heapItemBytes, headBytes = 40, 24, 6240
	return headBytes + topkTables*t.numBuckets*bucketBytes + t.k*heapItemBytes + t.heapBytes
}

func (t *TopK) altIdx(fp uint16, idx int) int {
	return int((uint64(idx) ^ (0x5bd1e995 * uint64(fp))) & uint64(t.numBuckets-1))
}

type topkFPIdx struct {
	idx [topkTables]int
	fp  uint16
}

func (t *TopK) fpAndIdx(item []byte) topkFPIdx {
	h := xxh3.Hash(item)
	var r topkFPIdx
	r.fp = uint16(h)
	r.idx[0] = int((h >> 32) & uint64(t.numBuckets-1))
	for i := 1; i < topkTables; i++ {
		r.idx[i] = t.altIdx(r.fp, r.idx[i-1])
	}
	return r
}

// entryRes is where an update landed: a table and a heavy position (-1: the
// lobby), or table -1 when nowhere.
type entryRes struct{ table, pos int }

var noEntry = entryRes{-1, -1}

// checkHeavy bumps item's heavy entry, or takes an empty heavy entry for it.
func (t *TopK) checkHeavy(it topkFPIdx, weight uint64) entryRes {
	emptyT, emptyP := -1, -1
	for i := 0; i < topkTables; i++ {
		b := &t.tables[i][it.idx[i]]
		for j := range b.heavy {
			e := &b.heavy[j]
			if e.count > 0 {
				if e.fp == it.fp {
					e.count += weight
					return entryRes{i, j}
				}
			} else if emptyT == -1 {
				emptyT, emptyP = i, j
			}
		}
	}
	if emptyT == -1 {
		return noEntry
	}
	e := &t.tables[emptyT][it.idx[emptyT]].heavy[emptyP]
	e.fp, e.count = it.fp, weight
	return entryRes{emptyT, emptyP}
}

func (t *TopK) isHeavyHitter(cnt uint64) bool {
	return float64(cnt) >= float64(t.Total)*topkHeavyRatio
}

// kickout moves a heavy entry displaced from bucket idx of table tbl to its
// other bucket, displacing that one's smallest in turn, while it stays a heavy
// hitter (at most topkMaxKicks moves).
func (t *TopK) kickout(e topkHeavy, idx, tbl int) {
	for i := 0; i < topkMaxKicks; i++ {
		if !t.isHeavyHitter(e.count) {
			return
		}
		tbl = 1 - tbl
		idx = t.altIdx(e.fp, idx)
		b := &t.tables[tbl][idx]
		minC, minP := uint64(math.MaxUint64), -1
		for j := range b.heavy {
			if b.heavy[j].count == 0 {
				b.heavy[j] = e
				return
			}
			if b.heavy[j].count < minC {
				minC, minP = b.heavy[j].count, j
			}
		}
		b.heavy[minP], e = e, b.heavy[minP]
	}
}

// tryPromote promotes a lobby entry that reached newCount to a heavy entry of
// its bucket in table tbl; it returns the heavy position, or -1 when the dice
// said no.
func (t *TopK) tryPromote(it topkFPIdx, newCount uint64, tbl int) int {
	idx := it.idx[tbl]
	b := &t.tables[tbl][idx]
	minC, minI := uint64(math.MaxUint64), -1
	for i := range b.heavy {
		if b.heavy[i].count == 0 {
			b.heavy[i].fp, b.heavy[i].count = it.fp, newCount
			return i
		}
		if b.heavy[i].count < minC {
			minC, minI = b.heavy[i].count, i
		}
	}
	if minC > newCount {
		prob := float64(newCount-topkLobbyPromote) / float64(minC-topkLobbyPromote)
		if t.rnd() >= prob {
			return -1
		}
	}
	out := b.heavy[minI]
	b.heavy[minI].fp = b.lobbyFP // keeping the old count, as the paper says
	b.lobbyCount, b.lobbyFP = 0, 0
	t.kickout(out, idx, tbl)
	return minI
}

func (t *TopK) checkLobby(it topkFPIdx, weight uint64) entryRes {
	for i := 0; i < topkTables; i++ {
		b := &t.tables[i][it.idx[i]]
		if b.lobbyFP != it.fp || b.lobbyCount == 0 {
			continue
		}
		n := uint64(b.lobbyCount) + weight
		if n < topkLobbyPromote {
			b.lobbyCount = uint8(n)
			return entryRes{i, -1}
		}
		if pos := t.tryPromote(it, n, i); pos != -1 {
			return entryRes{i, pos}
		}
		b.lobbyCount = topkLobbyPromote
		return entryRes{i, -1}
	}
	return noEntry
}

func (t *TopK) decayProb(cnt uint64) float64 {
	if cnt < topkLUT {
		return t.lutProb[cnt]
	}
	return math.Pow(t.lutProb[topkLUT], float64(cnt)/topkLUT) * t.lutProb[cnt%topkLUT]
}

func (t *TopK) minDecay(cnt uint64) float64 {
	if cnt < topkLUT {
		return t.lutMin[cnt]
	}
	return math.Pow(t.lutMin[topkLUT], float64(cnt)/topkLUT) * t.lutMin[cnt%topkLUT]
}

// decayCounter is chkDecayCounter: a lobby count after a collision of
// weight.
func (t *TopK) decayCounter(cnt uint8, weight uint64) uint8 {
	if weight == 0 {
		return cnt
	}
	if weight == 1 {
		if t.rnd() < t.decayProb(uint64(cnt)) {
			return cnt - 1
		}
		return cnt
	}
	if md := t.minDecay(uint64(cnt)); weight < uint64(md) {
		if t.rnd() < float64(weight)/md {
			return cnt - 1
		}
		return cnt
	}
	if weight >= uint64(t.lutExp[cnt]) {
		return 0
	}
	left, right := 0, int(cnt)
	for left < right {
		mid := left + (right-left)/2
		if t.lutExp[mid]+float64(weight) >= t.lutExp[cnt] {
			right = mid
		} else {
			left = mid + 1
		}
	}
	return uint8(left)
}

// Update adds weight to item (chkTopKUpdate). It reports the item that left
// the top k because of it, if any.
func (t *TopK) Update(item []byte, weight uint64) (expelled []byte) {
	if weight == 0 {
		return nil
	}
	t.Total += weight
	it := t.fpAndIdx(item)
	res := t.checkHeavy(it, weight)
	if res.table == -1 {
		res = t.checkLobby(it, weight)
	}
	if res.table == -1 {
		res = t.place(it, weight)
	}
	if res.table == -1 || res.pos == -1 {
		return nil
	}
	e := &t.tables[res.table][it.idx[res.table]].heavy[res.pos]
	if e.count < t.heap[0].Count {
		return nil
	}
	fp := xxh3.HashSeed(item, topkHeapSeed)
	for i := t.k - 1; i >= 0; i-- {
		h := &t.heap[i]
		if h.fp == fp && h.Item != nil && string(h.Item) == string(item) {
			h.Count = e.count
			t.heapifyDown(i)
			return nil
		}
	}
	expelled = t.heap[0].Item
	t.heapBytes += len(item) - len(expelled)
	t.heap[0] = TopKItem{Count: e.count, Item: append([]byte{}, item...), fp: fp}
	t.heapifyDown(0)
	return expelled
}

// place puts an item tracked nowhere in an empty lobby entry, or decays the
// lobby entry its fingerprint chooses and takes it over when that reaches 0.
func (t *TopK) place(it topkFPIdx, weight uint64) entryRes {
	for i := 0; i < topkTables; i++ {
		b := &t.tables[i][it.idx[i]]
		if b.lobbyCount != 0 {
			continue
		}
		b.lobbyFP = it.fp
		res := entryRes{i, -1}
		if weight < topkLobbyPromote {
			b.lobbyCount = uint8(weight)
		} else if pos := t.tryPromote(it, weight, i); pos != -1 {
			res.pos = pos
		} else {
			b.lobbyCount = topkLobbyPromote
		}
		return res
	}
	tbl := int(it.fp & 1)
	b := &t.tables[tbl][it.idx[tbl]]
	res := noEntry
	if n := t.decayCounter(b.lobbyCount, weight); n == 0 {
		b.lobbyFP = it.fp
		exp := uint64(t.lutExp[b.lobbyCount])
		if exp >= weight {
			b.lobbyCount = 1
		} else {
			b.lobbyCount = uint8(min(255, weight-exp))
		}
	} else {
		b.lobbyCount = n
	}
	if b.lobbyCount >= topkLobbyPromote {
		if pos := t.tryPromote(it, uint64(b.lobbyCount), tbl); pos != -1 {
			res = entryRes{tbl, pos}
		}
	}
	return res
}

// heapifyDown is chkHeapifyDown: sifts heap[start] down the min-heap.
func (t *TopK) heapifyDown(start int) {
	a, n := t.heap, len(t.heap)
	if n < 2 || (n-2)/2 < start {
		return
	}
	child := 2*start + 1
	if child+1 < n && a[child].Count > a[child+1].Count {
		child++
	}
	if a[child].Count > a[start].Count {
		return
	}
	top := a[start]
	for {
		a[start] = a[child]
		start = child
		if (n-2)/2 < child {
			break
		}
		child = 2*child + 1
		if child+1 < n && a[child].Count > a[child+1].Count {
			child++
		}
		if !(a[child].Count < top.Count) {
			break
		}
	}
	a[start] = top
}

// List is chkTopKList: the k heap slots by count, largest first (unused
// slots, count 0, last). The items are t's own: read them before t changes.
func (t *TopK) List() []TopKItem {
	out := slices.Clone(t.heap)
	slices.SortStableFunc(out, func(a, b TopKItem) int {
		switch {
		case a.Count > b.Count:
			return -1
		case a.Count < b.Count:
			return 1
		}
		return 0
	})
	return out
}
