package keyspace

import (
	"math"
	"math/bits"
	"unsafe"
)

// The skiplist of a sorted set's big encoding: Redis's zskiplist (t_zset.c), a
// skiplist ordered by (score, member) with a span on every forward link so that
// ranks are found in O(log n), and a backward link on level 0 for reverse walks.
// Nodes live inside the entries of the set's Dict (see zsetBig), which never move
// in memory, so the list links point straight into the dict.

// zslMaxLevel and the 1/4 promotion probability are ZSKIPLIST_MAXLEVEL and
// ZSKIPLIST_P.
const zslMaxLevel = 32

// zslLevel is one forward link; span is the number of level-0 steps it covers.
// A nil forward link's span counts the nodes after its owner, as in Redis. Spans
// are 32 bits (a set of 2^32 members would need hundreds of GB), which leaves
// room for aux: in a node's level 0, the node's level count.
type zslLevel struct {
	forward *zslNode
	span    uint32
	aux     uint32
}

// zslNode is one element. Level 0 is inline (three quarters of the nodes have
// only that level); the upper levels are in an array of zslUpper that more
// points to: more[i] is level i, and more[0] holds the node's score again (in
// its span and aux). An upper link also keeps its forward node's more array
// (fmore), so a search above level 0 goes from levels array to levels array and
// compares with the score copy without reading the nodes it passes: one cache
// miss a step, as Redis's nodes with inline levels (zslSeek). Every node but the
// header is the value of a dict entry, whose key is the member (see member):
// with the entry's key and link, 64 bytes a member.
type zslNode struct {
	score    float64
	backward *zslNode
	lvl0     zslLevel
	more     *zslUpper
}

// zslUpper is a link above level 0: a zslLevel (same layout, so lv serves
// every level) and the forward node's levels.
type zslUpper struct {
	zslLevel
	fmore *zslUpper // forward.more; nil when forward is
}

// setForward points an upper link at y.
func (u *zslUpper) setForward(y *zslNode) {
	u.forward, u.fmore = y, nil
	if y != nil {
		u.fmore = y.more
	}
}

// upperScore is the score copy a levels array carries in its element 0.
func (u *zslUpper) upperScore() float64 {
	return math.Float64frombits(uint64(u.span) | uint64(u.aux)<<32)
}

// up returns upper level i (i >= 1) of the levels array m.
func (m *zslUpper) up(i int) *zslUpper {
	return (*zslUpper)(unsafe.Add(unsafe.Pointer(m), uintptr(i)*unsafe.Sizeof(zslUpper{})))
}

// zslNodeOffset is where a node sits in its dict entry.
var zslNodeOffset = unsafe.Offsetof(dictEntry[zslNode]{}.val)

// member returns the node's member: the key of the dict entry that holds the
// node (nodes never move, see Dict), so the member is stored once. It must not
// be called on the header.
func (x *zslNode) member() string {
	return (*dictEntry[zslNode])(unsafe.Add(unsafe.Pointer(x), -int(zslNodeOffset))).key
}

func (x *zslNode) lv(i int) *zslLevel {
	if i == 0 {
		return &x.lvl0
	}
	return &x.more.up(i).zslLevel
}

// setScore sets x's score and the copy in its levels array.
func (x *zslNode) setScore(s float64) {
	x.score = s
	if x.more != nil {
		b := math.Float64bits(s)
		x.more.span, x.more.aux = uint32(b), uint32(b>>32)
	}
}

func (x *zslNode) levels() int { return int(x.lvl0.aux) }

// before reports whether x sorts before (score, member).
func (x *zslNode) before(score float64, member string) bool {
	return x.score < score || (x.score == score && x.member() < member)
}

type zskiplist struct {
	header zslNode // more has zslMaxLevel levels; its score copy unused
	tail   *zslNode
	length int
	level  int
	rnd    uint64 // splitmix64 state for node levels (deterministic, unobservable)
}

func newZskiplist() *zskiplist {
	zsl := &zskiplist{level: 1}
	zsl.header.setLevel(zslMaxLevel)
	return zsl
}

// first returns the lowest node, or nil.
func (zsl *zskiplist) first() *zslNode { return zsl.header.lvl0.forward }

// randomLevel is zslRandomLevel: level k+1 with probability (1/4)^k (1-1/4).
func (zsl *zskiplist) randomLevel() int {
	zsl.rnd += 0x9e3779b97f4a7c15
	z := zsl.rnd
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return min(1+bits.TrailingZeros64(z)/2, zslMaxLevel)
}

// setLevel sizes x's links for a node of the given level.
func (x *zslNode) setLevel(level int) {
	x.lvl0.aux = uint32(level)
	x.more = nil
	if level > 1 {
		x.more = &make([]zslUpper, level)[0]
		x.setScore(x.score)
	}
}

// search walks down from the header to the last node before (score, member)
// on every level, recording it in update (rank too, when not nil), and returns
// the level-0 successor of that last node. Above level 0 it compares with the
// score copies in the levels arrays, reading a node only for its member when
// the scores tie.
func (zsl *zskiplist) search(score float64, member string, update *[zslMaxLevel]*zslNode, rank *[zslMaxLevel]int) *zslNode {
	n, nm := &zsl.header, zsl.header.more
	r := 0
	for i := zsl.level - 1; i >= 1; i-- {
		for {
			u := nm.up(i)
			if u.forward == nil {
				break
			}
			if fs := u.fmore.upperScore(); fs > score || (fs == score && u.forward.member() >= member) {
				break
			}
			r += int(u.span)
			n, nm = u.forward, u.fmore
		}
		update[i] = n
		if rank != nil {
			rank[i] = r
		}
	}
	for {
		f := n.lvl0.forward
		if f == nil || !f.before(score, member) {
			break
		}
		r += int(n.lvl0.span)
		n = f
	}
	update[0] = n
	if rank != nil {
		rank[0] = r
	}
	return n.lvl0.forward
}

// insert links x (member, score and level set; not in the list) at its place:
// zslInsert with the node supplied by the caller.
func (zsl *zskiplist) insert(x *zslNode) {
	var update [zslMaxLevel]*zslNode
	var rank [zslMaxLevel]int
	zsl.search(x.score, x.member(), &update, &rank)
	level := x.levels()
	if level > zsl.level {
		for i := zsl.level; i < level; i++ {
			rank[i] = 0
			update[i] = &zsl.header
			update[i].lv(i).span = uint32(zsl.length)
		}
		zsl.level = level
	}
	for i := 0; i < level; i++ {
		xl, ul := x.lv(i), update[i].lv(i)
		if i == 0 {
			xl.forward = ul.forward
			ul.forward = x
		} else {
			xu, uu := x.more.up(i), update[i].more.up(i)
			xu.setForward(uu.forward)
			uu.setForward(x)
		}
		xl.span = ul.span - uint32(rank[0]-rank[i])
		ul.span = uint32(rank[0] - rank[i] + 1)
	}
	for i := level; i < zsl.level; i++ {
		update[i].lv(i).span++
	}
	x.backward = nil
	if update[0] != &zsl.header {
		x.backward = update[0]
	}
	if x.lvl0.forward != nil {
		x.lvl0.forward.backward = x
	} else {
		zsl.tail = x
	}
	zsl.length++
}

// seek fills update with the last node before (score, member) on every level and
// returns the level-0 successor of update[0] (the node itself if present).
func (zsl *zskiplist) seek(score float64, member string, update *[zslMaxLevel]*zslNode) *zslNode {
	return zsl.search(score, member, update, nil)
}

// unlink is zslDeleteNode: it removes x, whose predecessors are in update.
func (zsl *zskiplist) unlink(x *zslNode, update *[zslMaxLevel]*zslNode) {
	for i := 0; i < zsl.level; i++ {
		ul := update[i].lv(i)
		if ul.forward == x {
			xl := x.lv(i)
			ul.span += xl.span - 1
			if i == 0 {
				ul.forward = xl.forward
			} else {
				update[i].more.up(i).setForward(xl.forward)
			}
		} else {
			ul.span--
		}
	}
	if x.lvl0.forward != nil {
		x.lvl0.forward.backward = x.backward
	} else {
		zsl.tail = x.backward
	}
	for zsl.level > 1 && zsl.header.lv(zsl.level-1).forward == nil {
		zsl.level--
	}
	zsl.length--
}

// remove unlinks the node x (which is in the list).
func (zsl *zskiplist) remove(x *zslNode) {
	var update [zslMaxLevel]*zslNode
	zsl.seek(x.score, x.member(), &update)
	zsl.unlink(x, &update)
}

// updateScore is zslUpdateScore: it moves x to its place for newScore, in place
// when its neighbours allow.
func (zsl *zskiplist) updateScore(x *zslNode, newScore float64) {
	if (x.backward == nil || x.backward.score < newScore) &&
		(x.lvl0.forward == nil || x.lvl0.forward.score > newScore) {
		x.setScore(newScore)
		return
	}
	zsl.remove(x)
	x.setScore(newScore)
	zsl.insert(x)
}

// rank is zslGetRank: the 1-based rank of x (which is in the list), or 0.
func (zsl *zskiplist) rank(x *zslNode) int {
	var update [zslMaxLevel]*zslNode
	var rank [zslMaxLevel]int
	if zsl.search(x.score, x.member(), &update, &rank) != x {
		return 0
	}
	return rank[0] + 1
}

// byRank is zslGetElementByRank: the node of 1-based rank r, or nil.
func (zsl *zskiplist) byRank(r int) *zslNode {
	if r < 1 || r > zsl.length {
		return nil
	}
	traversed := 0
	n := &zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for {
			l := n.lv(i)
			if l.forward == nil || traversed+int(l.span) > r {
				break
			}
			traversed += int(l.span)
			n = l.forward
		}
		if traversed == r {
			return n
		}
	}
	return nil
}

// seekPrefix fills update with the last node of the prefix for which out holds,
// on every level, and returns the first node after that prefix.
func (zsl *zskiplist) seekPrefix(out func(*zslNode) bool, update *[zslMaxLevel]*zslNode) *zslNode {
	n := &zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for {
			f := n.lv(i).forward
			if f == nil || !out(f) {
				break
			}
			n = f
		}
		update[i] = n
	}
	return n.lvl0.forward
}

// seekRank fills update with the node before 1-based rank r on every level and
// returns the node of rank r.
func (zsl *zskiplist) seekRank(r int, update *[zslMaxLevel]*zslNode) *zslNode {
	traversed := 0
	n := &zsl.header
	for i := zsl.level - 1; i >= 0; i-- {
		for {
			l := n.lv(i)
			if l.forward == nil || traversed+int(l.span) >= r {
				break
			}
			traversed += int(l.span)
			n = l.forward
		}
		update[i] = n
	}
	return n.lvl0.forward
}
