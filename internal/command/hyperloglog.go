package command

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
)

// hyperloglogCommands is redis.io's "hyperloglog" group (hyperloglog.c). The
// values are strings in Redis's own format (hll.go).
func hyperloglogCommands() []*Spec {
	const w, r, d, f = Write, ReadOnly, DenyOOM, Fast
	return []*Spec{
		{Name: "pfadd", Arity: -2, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW insert", Run: pfaddCmd},
		{Name: "pfcount", Arity: -2, Flags: r | MayReplicate, FirstKey: 1, LastKey: -1, Step: 1, Keys: []KeySpec{{Flags: "RW access", Begin: 1, Last: -1, Step: 1, Notes: "RW because it may change the internal representation of the key, and propagate to replicas"}}, Run: pfcountCmd},
		{Name: "pfdebug", Arity: 3, Flags: w | d | Admin, FirstKey: 2, LastKey: 2, Step: 1, KeyFlags: "RW access", Run: pfdebugCmd},
		{Name: "pfmerge", Arity: -2, Flags: w | d, FirstKey: 1, LastKey: -1, Step: 1, Keys: []KeySpec{{Flags: "RW access insert", Begin: 1, Step: 1}, {Flags: "RO access", Begin: 2, Last: -1, Step: 1}}, Run: pfmergeCmd},
		{Name: "pfselftest", Arity: 1, Flags: Admin, Run: pfselftestCmd},
	}
}

func (c *Ctx) hllSparseMax() int64 {
	if l := c.KS.Limits; l != nil && l.HLLSparseMaxBytes != nil {
		return l.HLLSparseMaxBytes()
	}
	return 3000
}

// lookupHLL looks key up (for writing when write) and checks that it holds a
// valid HLL: nil, true when missing; nil, false after a WRONGTYPE reply.
func lookupHLL(c *Ctx, key []byte, write bool) (*keyspace.Entry, bool) {
	e, ok := lookupKind(c, key, keyspace.KindString, write)
	if !ok {
		return nil, false
	}
	if e != nil && !isHLL(e.Bytes(), e.Enc == keyspace.EncInt) {
		c.Error(errNotHLL)
		return nil, false
	}
	return e, true
}

// pfaddCmd: PFADD key [element ...]. Replies 1 if the key was created or any
// register changed. A corrupt sparse value stops with INVALIDOBJ, keeping the
// registers already raised, as Redis does.
func pfaddCmd(c *Ctx) {
	key := c.Argv[1]
	e, ok := lookupHLL(c, key, true)
	if !ok {
		return
	}
	updated := 0
	if e == nil {
		e = c.DB.SetString(key, nil, false)
		e.SetBytes(newHLL())
		updated++
	}
	e.Enc = keyspace.EncRaw
	maxBytes := c.hllSparseMax()
	s := e.Writable() // hllAdd may reallocate s: stored back on every path
	for _, ele := range c.Argv[2:] {
		switch hllAdd(&s, ele, maxBytes) {
		case 1:
			updated++
		case -1:
			e.SetBytes(s)
			c.Error(errHLLInvalid)
			return
		}
	}
	e.SetBytes(s)
	if updated > 0 {
		c.DB.Touch(key)
		c.Notify('$', "pfadd", key)
		c.Dirty += updated
		hllInvalidate(s)
		c.W.Int(1)
		return
	}
	c.W.Int(0)
}

// pfcountCmd: PFCOUNT key [key ...]. One key: the cached cardinality, or a new
// estimate written back into the header (a change of the value, as in Redis).
// Several keys: the estimate of their union, cached nowhere.
func pfcountCmd(c *Ctx) {
	if len(c.Argv) > 2 {
		var regs [hllRegisters]uint8
		for _, k := range c.Argv[1:] {
			e, ok := lookupHLL(c, k, false)
			if !ok {
				return
			}
			if e == nil {
				continue
			}
			if !hllMergeInto(&regs, e.Bytes()) {
				c.Error(errHLLInvalid)
				return
			}
		}
		var h [64]int
		for _, v := range regs {
			h[v]++
		}
		c.W.Int(int64(hllEstimate(&h)))
		return
	}
	key := c.Argv[1]
	e, ok := lookupHLL(c, key, false)
	if !ok {
		return
	}
	if e == nil {
		c.W.Int(0)
		return
	}
	e.Enc = keyspace.EncRaw
	card := binary.LittleEndian.Uint64(e.Bytes()[8:16])
	if e.Bytes()[15]&0x80 != 0 {
		var h [64]int
		if hllHisto(e.Bytes(), &h) {
			c.Error(errHLLInvalid)
			return
		}
		card = hllEstimate(&h)
		c.DB.Changing(key)
		binary.LittleEndian.PutUint64(e.Writable()[8:16], card)
		c.DB.Touch(key)
		c.Dirty++
	}
	c.W.Int(int64(card))
}

// pfmergeCmd: PFMERGE destkey [sourcekey ...]. The destination (which counts as
// a source too) is created empty when missing; it turns dense if any source is
// dense, else stays sparse while it fits.
func pfmergeCmd(c *Ctx) {
	var regs [hllRegisters]uint8
	useDense := false
	for _, k := range c.Argv[1:] {
		e, ok := lookupHLL(c, k, false)
		if !ok {
			return
		}
		if e == nil {
			continue
		}
		if e.Bytes()[4] == hllDense {
			useDense = true
		}
		if !hllMergeInto(&regs, e.Bytes()) {
			c.Error(errHLLInvalid)
			return
		}
	}
	key := c.Argv[1]
	e := c.DB.LookupWrite(key)
	if e == nil {
		e = c.DB.SetString(key, nil, false)
		e.SetBytes(newHLL())
	}
	e.Enc = keyspace.EncRaw
	s := e.Writable() // the conversions may reallocate s: stored back on every path
	if useDense && !hllSparseToDense(&s) {
		e.SetBytes(s)
		c.Error(errHLLInvalid)
		return
	}
	maxBytes := c.hllSparseMax()
	for i, v := range regs {
		if v == 0 {
			continue
		}
		if s[4] == hllDense {
			denseSetMax(s[hllHdrSize:], i, v)
		} else {
			hllSparseSet(&s, i, v, maxBytes)
		}
	}
	e.SetBytes(s)
	hllInvalidate(s)
	c.DB.Touch(key)
	c.Notify('$', "pfadd", key)
	c.Dirty++
	c.W.SimpleString("OK")
}

// pfdebugCmd: PFDEBUG GETREG|DECODE|ENCODING|TODENSE key.
func pfdebugCmd(c *Ctx) {
	sub := c.Argv[1]
	key := c.Argv[2]
	e, ok := lookupHLL(c, key, true)
	if !ok {
		return
	}
	if e == nil {
		c.Error("ERR The specified key does not exist")
		return
	}
	e.Enc = keyspace.EncRaw
	switch {
	case eqFold(sub, "getreg"):
		if e.Bytes()[4] == hllSparse {
			s := e.Writable()
			ok := hllSparseToDense(&s)
			e.SetBytes(s)
			if !ok {
				c.Error(errHLLInvalid)
				return
			}
			c.DB.Touch(key)
			c.Dirty++
		}
		regs := e.Writable()[hllHdrSize:]
		c.W.ArrayLen(hllRegisters)
		for i := 0; i < hllRegisters; i++ {
			c.W.Int(int64(denseGet(regs, i)))
		}
	case eqFold(sub, "decode"):
		if e.Bytes()[4] != hllSparse {
			c.Error("ERR HLL encoding is not sparse")
			return
		}
		var out []byte
		s := e.Writable()
		for p := hllHdrSize; p < len(s); {
			b := s[p]
			switch {
			case isZero(b):
				out = append(out, "z:"...)
				out = strconv.AppendInt(out, int64(zeroLen(b)), 10)
				p++
			case isXZero(b):
				out = append(out, "Z:"...)
				out = strconv.AppendInt(out, int64(xzeroLen(s, p)), 10)
				p += 2
			default:
				out = append(out, "v:"...)
				out = strconv.AppendInt(out, int64(valValue(b)), 10)
				out = append(out, ',')
				out = strconv.AppendInt(out, int64(valLen(b)), 10)
				p++
			}
			out = append(out, ' ')
		}
		if len(out) > 0 {
			out = out[:len(out)-1]
		}
		c.W.Bulk(out)
	case eqFold(sub, "encoding"):
		if e.Bytes()[4] == hllDense {
			c.W.SimpleString("dense")
		} else {
			c.W.SimpleString("sparse")
		}
	case eqFold(sub, "todense"):
		if e.Bytes()[4] == hllSparse {
			s := e.Writable()
			ok := hllSparseToDense(&s)
			e.SetBytes(s)
			if !ok {
				c.Error(errHLLInvalid)
				return
			}
			c.DB.Touch(key)
			c.Dirty++
			c.W.Int(1)
			return
		}
		c.W.Int(0)
	default:
		c.Error("ERR Unknown PFDEBUG subcommand '" + string(sub) + "'")
	}
}

// pfselftestCmd is PFSELFTEST: the dense register accessors keep every value
// without touching their neighbours, and sparse and dense HLLs fed the same
// 10 million elements agree and stay within 6 standard errors. It draws from
// the execution unit's seeded source.
func pfselftestCmd(c *Ctx) {
	dense := make([]byte, hllDenseSize)
	copy(dense, "HYLL")
	regs := dense[hllHdrSize:]
	var want [hllRegisters]uint8
	for cycle := 0; cycle < 1000; cycle++ {
		for i := range want {
			v := uint8(c.Rand() & hllRegMax)
			want[i] = v
			denseSet(regs, i, v)
		}
		for i := range want {
			if got := denseGet(regs, i); got != want[i] {
				c.Error("TESTFAILED Register " + strconv.Itoa(i) + " should be " + strconv.Itoa(int(want[i])) + " but is " + strconv.Itoa(int(got)))
				return
			}
		}
	}
	clear(regs)
	sparse := newHLL()
	relerr := 1.04 / math.Sqrt(hllRegisters)
	maxBytes := c.hllSparseMax()
	seed := c.Rand()
	var ele [8]byte
	checkpoint := int64(1)
	for j := int64(1); j <= 10000000; j++ {
		binary.LittleEndian.PutUint64(ele[:], uint64(j)^seed)
		idx, cnt := hllPatLen(ele[:])
		denseSetMax(regs, idx, cnt)
		hllAdd(&sparse, ele[:], maxBytes)
		if j != checkpoint {
			continue
		}
		if j < maxBytes/2 && sparse[4] != hllSparse {
			c.Error("TESTFAILED sparse encoding not used")
			return
		}
		var hd, hs [64]int
		hllHisto(dense, &hd)
		hllHisto(sparse, &hs)
		card := hllEstimate(&hd)
		if card != hllEstimate(&hs) {
			c.Error("TESTFAILED dense/sparse disagree")
			return
		}
		abserr := checkpoint - int64(card)
		maxerr := int64(math.Ceil(relerr * 6 * float64(checkpoint)))
		if j == 10 {
			maxerr = 1
		}
		if abserr < 0 {
			abserr = -abserr
		}
		if abserr > maxerr {
			c.Error("TESTFAILED Too big error. card:" + strconv.FormatInt(checkpoint, 10) + " abserr:" + strconv.FormatInt(abserr, 10))
			return
		}
		checkpoint *= 10
	}
	c.W.SimpleString("OK")
}
