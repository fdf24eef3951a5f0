package command

import (
	"math"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// The stream group (t_stream.c): entries in keyspace.Stream, commands here,
// consumer groups and XINFO in stream_group.go.

func streamCommands() []*Spec {
	const w, r, d, f, b = Write, ReadOnly, DenyOOM, Fast, Blocking
	nd := []string{"nondeterministic_output"}
	return []*Spec{
		{Name: "xack", Arity: -4, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: xackCmd},
		{Name: "xackdel", Arity: -6, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update delete", Run: xackdelCmd},
		{Name: "xadd", Arity: -5, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, Keys: []KeySpec{{Flags: "RW update", Begin: 1, Step: 1, Notes: "UPDATE instead of INSERT because of the optional trimming feature"}}, Tips: nd, Run: xaddCmd},
		{Name: "xautoclaim", Arity: -6, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Tips: nd, Run: xautoclaimCmd},
		{Name: "xclaim", Arity: -6, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Tips: nd, Run: xclaimCmd},
		{Name: "xdel", Arity: -3, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Run: xdelCmd},
		{Name: "xdelex", Arity: -5, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Run: xdelexCmd},
		{Name: "xcfgset", Arity: -2, Flags: w | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: xcfgsetCmd},
		{Name: "xgroup", Arity: -2, Subs: xgroupSubcommands()},
		{Name: "xidmprecord", Arity: 5, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: xidmprecordCmd},
		{Name: "xinfo", Arity: -2, Subs: xinfoSubcommands()},
		{Name: "xlen", Arity: 2, Flags: r | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO", Run: xlenCmd},
		{Name: "xpending", Arity: -3, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Tips: nd, Run: xpendingCmd},
		{Name: "xrange", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: xrangeCmd},
		{Name: "xread", Arity: -4, Flags: r | b, Keys: []KeySpec{{Flags: "RO access", Begin: 1, Last: -1, Step: 1, Limit: 2, Keyword: "STREAMS"}}, KeysFn: xreadKeys, Run: xreadCmd},
		{Name: "xreadgroup", Arity: -7, Flags: w | b, Keys: []KeySpec{{Flags: "RO access", Begin: 4, Last: -1, Step: 1, Limit: 2, Keyword: "STREAMS"}}, KeysFn: xreadKeys, Run: xreadgroupCmd},
		{Name: "xrevrange", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: xrevrangeCmd},
		{Name: "xsetid", Arity: -3, Flags: w | d | f, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: xsetidCmd},
		{Name: "xtrim", Arity: -4, Flags: w, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW delete", Tips: nd, Run: xtrimCmd},
	}
}

// xreadKeys: the keys are the first half of the arguments after STREAMS.
func xreadKeys(argv [][]byte) []int {
	for i := 1; i < len(argv); i++ {
		if eqFold(argv[i], "streams") {
			n := (len(argv) - i - 1) / 2
			out := make([]int, n)
			for j := range out {
				out[j] = i + 1 + j
			}
			return out
		}
	}
	return nil
}

const errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"

// parseULL is Redis's string2ull: string2ll for values it accepts (negative
// ones fail), else strtoull on the whole string.
func parseULL(b []byte) (uint64, bool) {
	if v, ok := resp.ParseInt(b); ok {
		if v < 0 {
			return 0, false
		}
		return uint64(v), true
	}
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	var u uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (math.MaxUint64-uint64(c-'0'))/10 {
			return 0, false // ERANGE
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		u = -u
	}
	return u, true
}

// parseStreamID is streamGenericParseIDOrReply without the reply: "-" and "+"
// (unless strict), <ms>-<seq>, <ms> (seq = missingSeq) and, when seqStar,
// <ms>-* (seqGiven false).
func parseStreamID(a []byte, missingSeq uint64, strict, seqStar bool) (id keyspace.StreamID, seqGiven, ok bool) {
	if len(a) > 127 {
		return id, false, false
	}
	for i, ch := range a { // the C string ends at a NUL
		if ch == 0 {
			a = a[:i]
			break
		}
	}
	if len(a) == 1 && (a[0] == '-' || a[0] == '+') {
		if strict {
			return id, false, false
		}
		if a[0] == '-' {
			return keyspace.StreamID{}, true, true
		}
		return keyspace.MaxStreamID, true, true
	}
	seqGiven = true
	dash := -1
	for i, ch := range a {
		if ch == '-' {
			dash = i
			break
		}
	}
	msPart := a
	if dash >= 0 {
		msPart = a[:dash]
	}
	ms, ok := parseULL(msPart)
	if !ok {
		return id, false, false
	}
	seq := missingSeq
	if dash >= 0 {
		rest := a[dash+1:]
		if seqStar && len(rest) == 1 && rest[0] == '*' {
			seq, seqGiven = 0, false
		} else if seq, ok = parseULL(rest); !ok {
			return id, false, false
		}
	}
	return keyspace.StreamID{Ms: ms, Seq: seq}, seqGiven, true
}

// streamIDArg parses a strict ID, replying the error on failure.
func streamIDArg(c *Ctx, a []byte, strict bool) (keyspace.StreamID, bool) {
	id, _, ok := parseStreamID(a, 0, strict, false)
	if !ok {
		c.Error(errInvalidStreamID)
	}
	return id, ok
}

// intervalID is streamParseIntervalIDOrReply plus the ( adjustment of
// XRANGE/XPENDING/XAUTOCLAIM: start ids move up, end ids down.
func intervalID(c *Ctx, a []byte, missingSeq uint64, start bool) (keyspace.StreamID, bool) {
	if len(a) > 1 && a[0] == '(' {
		id, _, ok := parseStreamID(a[1:], missingSeq, true, false)
		if !ok {
			c.Error(errInvalidStreamID)
			return id, false
		}
		if start {
			if id, ok = id.Incr(); !ok {
				c.Error("ERR invalid start ID for the interval")
				return id, false
			}
		} else if id, ok = id.Decr(); !ok {
			c.Error("ERR invalid end ID for the interval")
			return id, false
		}
		return id, true
	}
	id, _, ok := parseStreamID(a, missingSeq, false, false)
	if !ok {
		c.Error(errInvalidStreamID)
	}
	return id, ok
}

// lookupStream returns the stream at key (nil when missing), WRONGTYPE replied.
func lookupStream(c *Ctx, key []byte, write bool) (*keyspace.Stream, bool) {
	e, ok := lookupKind(c, key, keyspace.KindStream, write)
	if !ok || e == nil {
		return nil, ok
	}
	return e.Obj().(*keyspace.Stream), true
}

func replyStreamID(c *Ctx, id keyspace.StreamID) {
	var buf [48]byte
	c.W.Bulk(id.Append(buf[:0]))
}

// streamScratch is reused for integer-encoded fields while replying.
type streamScratch struct{ b []byte }

// replyEntry writes [id, [field, value, ...]].
func replyEntry(c *Ctx, e *keyspace.StreamEntry, sc *streamScratch) {
	c.W.ArrayLen(2)
	replyEntryBody(c, e, sc)
}

// replyEntryBody is an entry's ID and its field-value array.
func replyEntryBody(c *Ctx, e *keyspace.StreamEntry, sc *streamScratch) {
	replyStreamID(c, e.ID)
	c.W.ArrayLen(2 * e.NumFields())
	sc.b = e.Fields(sc.b, func(f, v []byte) {
		c.W.Bulk(f)
		c.W.Bulk(v)
	})
}

// deferred marks where a reply's length goes once the elements are written
// (addReplyDeferredLen).
type deferred struct{ at int }

func deferLen(c *Ctx) deferred { return deferred{len(c.W.Buf)} }

// set inserts the header of n elements of type prefix ('*' array, '%' map).
func (d deferred) set(c *Ctx, prefix byte, n int) {
	var hb [24]byte
	h := append(hb[:0], prefix)
	h = strconv.AppendInt(h, int64(n), 10)
	h = append(h, '\r', '\n')
	buf := c.W.Buf
	buf = append(buf, h...)
	copy(buf[d.at+len(h):], buf[d.at:len(buf)-len(h)])
	copy(buf[d.at:], h)
	c.W.Buf = buf
}

// replyRange is streamReplyWithRange without a group: up to count entries
// (0: all) as an array.
func replyRange(c *Ctx, s *keyspace.Stream, start, end keyspace.StreamID, count int64, rev bool) int64 {
	d := deferLen(c)
	var n int64
	var sc streamScratch
	s.Range(start, end, rev, func(e *keyspace.StreamEntry) bool {
		replyEntry(c, e, &sc)
		n++
		return count == 0 || n < count
	})
	d.set(c, '*', int(n))
	return n
}

// ---- XADD / XTRIM ----

type addTrimArgs struct {
	keyspace.TrimArgs
	id        keyspace.StreamID
	idGiven   bool
	seqGiven  bool
	noMk      bool
	stratKw   int // index of MAXLEN/MINID
	stratIdx  int // index of the MAXLEN/MINID argument (for the rewrite)
	limitIdx  int // index of LIMIT (0: none)
	policyIdx int // index of KEEPREF/DELREF/ACKED (0: none)
	limitSeen bool
	policySet bool
	// IDMP pid iid / IDMPAUTO pid (XADD, Redis 8.6): the producer, the
	// idempotency ID (nil with IDMPAUTO), and where the option starts
	pid, iid []byte
	auto     bool
	idmpIdx  int
}

func isPolicy(a []byte) bool { _, ok := parsePolicy(a); return ok }

// parsePolicy reads KEEPREF, DELREF or ACKED (Redis 8.2's deletion
// policies); ok false when a is none of them.
func parsePolicy(a []byte) (int, bool) {
	switch {
	case eqFold(a, "keepref"):
		return keyspace.DeleteKeepRef, true
	case eqFold(a, "delref"):
		return keyspace.DeleteDelRef, true
	case eqFold(a, "acked"):
		return keyspace.DeleteAcked, true
	}
	return 0, false
}

// parseAddTrim is streamParseAddOrTrimArgsOrReply: it returns the index of
// the ID argument (XADD), -1 after replying an error.
func parseAddTrim(c *Ctx, a *addTrimArgs, xadd bool) int {
	argv := c.Argv
	i := 2
	for ; i < len(argv); i++ {
		more := len(argv) - 1 - i
		opt := argv[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			goto done
		case eqFold(opt, "maxlen") && more > 0, eqFold(opt, "minid") && more > 0:
			maxlen := eqFold(opt, "maxlen")
			a.stratKw = i
			if a.Strategy != keyspace.TrimNone {
				c.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return -1
			}
			a.Approx = false
			next := argv[i+1]
			if more >= 2 && len(next) == 1 && next[0] == '~' {
				a.Approx = true
				i++
			} else if more >= 2 && len(next) == 1 && next[0] == '=' {
				i++
			}
			if maxlen {
				v, ok := resp.ParseInt(argv[i+1])
				if !ok {
					c.Err(ErrNotInt)
					return -1
				}
				if v < 0 {
					c.Error("ERR The MAXLEN argument must be >= 0.")
					return -1
				}
				a.MaxLen = v
				a.Strategy = keyspace.TrimMaxLen
			} else {
				id, ok := streamIDArg(c, argv[i+1], true)
				if !ok {
					return -1
				}
				a.MinID = id
				a.Strategy = keyspace.TrimMinID
			}
			i++
			a.stratIdx = i
		case eqFold(opt, "limit") && more > 0:
			v, ok := resp.ParseInt(argv[i+1])
			if !ok {
				c.Err(ErrNotInt)
				return -1
			}
			if v < 0 {
				c.Error("ERR The LIMIT argument must be >= 0.")
				return -1
			}
			a.Limit = v
			a.limitSeen = true
			a.limitIdx = i
			i++
		case xadd && eqFold(opt, "nomkstream"):
			a.noMk = true
		case xadd && eqFold(opt, "idmpauto") && more > 0:
			if a.pid != nil {
				c.Error("ERR syntax error, IDMP/IDMPAUTO specified multiple times")
				return -1
			}
			if len(argv[i+1]) == 0 {
				c.Error("ERR syntax error, IDMPAUTO requires a non-empty producer ID")
				return -1
			}
			a.pid, a.auto, a.idmpIdx = argv[i+1], true, i
			i++
		case xadd && eqFold(opt, "idmp") && more >= 2:
			if a.pid != nil {
				c.Error("ERR syntax error, IDMP/IDMPAUTO specified multiple times")
				return -1
			}
			if len(argv[i+1]) == 0 {
				c.Error("ERR syntax error, IDMP requires a non-empty producer ID")
				return -1
			}
			if len(argv[i+2]) == 0 {
				c.Error("ERR syntax error, IDMP requires a non-empty idempotent ID")
				return -1
			}
			a.pid, a.iid, a.idmpIdx = argv[i+1], argv[i+2], i
			i += 2
		case isPolicy(opt):
			if a.policySet {
				c.Err(ErrSyntax)
				return -1
			}
			a.Policy, _ = parsePolicy(opt)
			a.policySet = true
			a.policyIdx = i
		case xadd:
			id, seqGiven, ok := parseStreamID(opt, 0, true, true)
			if !ok {
				c.Error(errInvalidStreamID)
				return -1
			}
			if a.pid != nil {
				c.Error("ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs")
				return -1
			}
			a.id, a.seqGiven, a.idGiven = id, seqGiven, true
			goto done
		default:
			c.Err(ErrSyntax)
			return -1
		}
	}
done:
	if a.Limit != 0 && a.Strategy == keyspace.TrimNone {
		c.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return -1
	}
	if !xadd && a.Strategy == keyspace.TrimNone {
		c.Error("ERR syntax error, XTRIM must be called with a trimming strategy")
		return -1
	}
	if a.limitSeen {
		if !a.Approx {
			c.Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
			return -1
		}
	} else if a.Approx {
		a.Limit = 100 * c.KS.Limits.StreamLimits().MaxEntries
		if a.Limit <= 0 {
			a.Limit = 10000
		}
		if a.Limit > 1000000 {
			a.Limit = 1000000
		}
	} else {
		a.Limit = 0
	}
	return i
}

// xaddCmd: XADD key [NOMKSTREAM] [KEEPREF|DELREF|ACKED] [IDMPAUTO pid|IDMP pid iid]
// [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]
//
// With IDMP / IDMPAUTO (Redis 8.6), an idempotency ID the producer already
// recorded (and that has not expired) answers the entry ID it produced and
// appends nothing; otherwise the entry is appended and the ID recorded
// (stream_idmp.go in keyspace). IDMPAUTO's ID is the hash of the field-value
// pairs (idmpAutoIID).
//
// Propagation: XADD with the entry's ID, the trimming made exact (MAXLEN or
// MINID = what it left, no LIMIT) and no IDMP option, then XIDMPRECORD for
// the record; a duplicate propagates nothing. Redis propagates XADD IDMP with
// the ID (a duplicate as received, with *), which a replica whose record
// expired earlier than the master's appends a second time; the pair above
// replays the master's decision instead (docs/decisions/0039).
func xaddCmd(c *Ctx) {
	var a addTrimArgs
	idpos := parseAddTrim(c, &a, true)
	if idpos < 0 {
		return
	}
	fieldPos := idpos + 1
	if n := len(c.Argv) - fieldPos; n < 2 || n%2 == 1 {
		c.Error(ErrArity("xadd"))
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		c.Error("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	key := c.Argv[1]
	e, ok := lookupKind(c, key, keyspace.KindStream, true)
	if !ok {
		return
	}
	var s *keyspace.Stream
	if e == nil {
		if a.noMk {
			c.W.Null()
			return
		}
		s = keyspace.NewStream(c.KS.Limits.StreamLimits())
	} else {
		s = e.Obj().(*keyspace.Stream)
	}
	var autoIID [16]byte
	if a.pid != nil {
		if a.auto {
			autoIID = idmpAutoIID(c.Argv[fieldPos:])
			a.iid = autoIID[:]
		}
		if e != nil {
			s.IdmpExpire(c.Now)
			if dup, found := s.IdmpLookup(a.pid, a.iid); found {
				s.IidsDuplicates++
				replyStreamID(c, dup)
				c.DB.Touch(key)
				c.Dirty++
				c.PreventPropagation()
				return
			}
		}
	}
	if s.LastID == keyspace.MaxStreamID {
		c.Error("ERR The stream has exhausted the last possible ID, unable to add more items")
		return
	}
	// streamAppendItem's ID
	var id keyspace.StreamID
	switch {
	case a.idGiven && a.seqGiven:
		id = a.id
	case a.idGiven:
		if s.LastID.Ms == a.id.Ms {
			if s.LastID.Seq == math.MaxUint64 {
				c.Error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
				return
			}
			id = keyspace.StreamID{Ms: s.LastID.Ms, Seq: s.LastID.Seq + 1}
		} else {
			id = a.id
		}
	default:
		ms := uint64(c.Now)
		if ms > s.LastID.Ms {
			id = keyspace.StreamID{Ms: ms}
		} else {
			id, _ = s.LastID.Incr()
		}
	}
	if id.Cmp(s.LastID) <= 0 {
		c.Error("ERR The ID specified in XADD is equal or smaller than the target stream top item")
		return
	}
	if !s.Append(id, c.Argv[fieldPos:], c.KS.Limits.StreamLimits()) {
		c.Error("ERR Elements are too large to be stored")
		return
	}
	if e == nil {
		c.DB.SetObject(key, keyspace.KindStream, s)
	}
	replyStreamID(c, id)
	if a.pid != nil {
		s.IdmpRecord(a.pid, a.iid, id)
		c.DB.IdmpChanged(s)
	}
	c.Notify('t', "xadd", key)
	c.Dirty++
	var trimmed int64
	if a.Strategy != keyspace.TrimNone {
		if trimmed = s.Trim(&a.TrimArgs); trimmed > 0 {
			c.Notify('t', "xtrim", key)
		}
	}
	c.DB.Touch(key)
	if c.Propagating() && (!a.seqGiven || a.Approx || a.pid != nil) {
		c.PreventPropagation()
		if a.pid == nil {
			c.AlsoPropagate(addTrimRewrite(c, &a, s, idpos, id, false)...)
			return
		}
		// the record goes between the append and the trimming, which may
		// delete the entry it names
		c.AlsoPropagate(addTrimRewrite(c, &a, s, idpos, id, true)...)
		var idb [41]byte
		c.AlsoPropagate(wXidmprecord, key, a.pid, a.iid, id.Append(idb[:0]))
		if trimmed > 0 {
			c.AlsoPropagate(xaddTrimAsXtrim(c, &a, s)...)
		}
	}
}

// xaddTrimAsXtrim is the XTRIM that repeats what XADD's trimming did: the
// strategy with "=" and the threshold made exact, and the policy.
func xaddTrimAsXtrim(c *Ctx, a *addTrimArgs, s *keyspace.Stream) [][]byte {
	out := [][]byte{wXtrim, c.Argv[1], c.Argv[a.stratKw], wEquals, trimThreshold(c, a, s)}
	if a.policyIdx != 0 {
		out = append(out, c.Argv[a.policyIdx])
	}
	return out
}

// trimThreshold is the MAXLEN/MINID argument to propagate: as received for
// an exact trim; for an approximate one what the trimming left, the length
// or the first entry's ID (streamRewriteTrimArgument).
func trimThreshold(c *Ctx, a *addTrimArgs, s *keyspace.Stream) []byte {
	switch {
	case !a.Approx:
		return c.Argv[a.stratIdx]
	case a.Strategy == keyspace.TrimMaxLen:
		return strconv.AppendUint(nil, s.Len(), 10)
	}
	return s.FirstEntryID().Append(nil)
}

// addTrimRewrite is XADD's or XTRIM's argv for propagation (Redis's
// streamRewriteApproxSpecifier and streamRewriteTrimArgument, and XADD's ID
// rewrite): "~" becomes "=", the threshold what trimming left (the length, or
// the first entry's ID), LIMIT and IDMP/IDMPAUTO are dropped, and XADD's ID
// argument (idpos > 0) is id. noTrim drops the trimming options altogether.
func addTrimRewrite(c *Ctx, a *addTrimArgs, s *keyspace.Stream, idpos int, id keyspace.StreamID, noTrim bool) [][]byte {
	out := make([][]byte, 0, len(c.Argv))
	for i := 0; i < len(c.Argv); i++ {
		switch {
		case a.limitIdx != 0 && i == a.limitIdx:
			i++ // LIMIT count
		case a.pid != nil && i == a.idmpIdx:
			if a.auto {
				i++ // IDMPAUTO pid
			} else {
				i += 2 // IDMP pid iid
			}
		case noTrim && a.Strategy != keyspace.TrimNone && i >= a.stratKw && i <= a.stratIdx:
		case noTrim && a.policyIdx != 0 && i == a.policyIdx:
		case a.Approx && i == a.stratIdx-1:
			out = append(out, wEquals)
		case a.Strategy != keyspace.TrimNone && i == a.stratIdx:
			out = append(out, trimThreshold(c, a, s))
		case idpos > 0 && i == idpos:
			out = append(out, id.Append(nil))
		default:
			out = append(out, c.Argv[i])
		}
	}
	return out
}

// xtrimCmd: XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]
func xtrimCmd(c *Ctx) {
	var a addTrimArgs
	if parseAddTrim(c, &a, false) < 0 {
		return
	}
	s, ok := lookupStream(c, c.Argv[1], true)
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	n := s.Trim(&a.TrimArgs)
	if n > 0 {
		c.Notify('t', "xtrim", c.Argv[1])
		c.DB.Touch(c.Argv[1])
		c.Dirty += int(n)
		if a.Approx && c.Propagating() {
			c.PropagateAs(addTrimRewrite(c, &a, s, 0, keyspace.StreamID{}, false)...)
		}
	}
	c.W.Int(n)
}

// ---- XRANGE / XREVRANGE / XLEN / XDEL ----

func xrangeCmd(c *Ctx)    { xrangeGeneric(c, false) }
func xrevrangeCmd(c *Ctx) { xrangeGeneric(c, true) }

func xrangeGeneric(c *Ctx, rev bool) {
	startArg, endArg := c.Argv[2], c.Argv[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ok := intervalID(c, startArg, 0, true)
	if !ok {
		return
	}
	end, ok := intervalID(c, endArg, math.MaxUint64, false)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(c.Argv); j++ {
		if eqFold(c.Argv[j], "count") && len(c.Argv)-j-1 >= 1 {
			v, ok := resp.ParseInt(c.Argv[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			count = max(v, 0)
			j++
		} else {
			c.Err(ErrSyntax)
			return
		}
	}
	s, ok := lookupStream(c, c.Argv[1], false)
	if !ok {
		return
	}
	if s == nil {
		c.W.ArrayLen(0)
		return
	}
	if count == 0 {
		c.W.NullArray()
		return
	}
	replyRange(c, s, start, end, max(count, 0), rev)
}

func xlenCmd(c *Ctx) {
	s, ok := lookupStream(c, c.Argv[1], false)
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	c.W.Int(int64(s.Len()))
}

// xdelCmd: XDEL key id [id ...]
func xdelCmd(c *Ctx) {
	s, ok := lookupStream(c, c.Argv[1], true)
	if !ok {
		return
	}
	if s == nil {
		c.W.Int(0)
		return
	}
	ids := make([]keyspace.StreamID, 0, len(c.Argv)-2)
	for _, a := range c.Argv[2:] {
		id, ok := streamIDArg(c, a, true)
		if !ok {
			return
		}
		ids = append(ids, id)
	}
	n := s.Delete(ids)
	if n > 0 {
		c.DB.Touch(c.Argv[1])
		c.Notify('t', "xdel", c.Argv[1])
		c.Dirty += n
	}
	c.W.Int(int64(n))
}

// ---- XREAD / XREADGROUP ----

// parseTimeoutMs is getTimeoutFromObjectOrReply with UNIT_MILLISECONDS.
func parseTimeoutMs(c *Ctx, a []byte) (int64, bool) {
	v, ok := resp.ParseInt(a)
	if !ok {
		c.Err(ErrTimeout)
		return 0, false
	}
	if v < 0 {
		c.Error("ERR timeout is negative")
		return 0, false
	}
	if v > 0 {
		if v > math.MaxInt64-c.Now {
			c.Error("ERR timeout is out of range")
			return 0, false
		}
		v += c.Now
	}
	return v, true
}

func xreadCmd(c *Ctx)      { xreadGeneric(c, false) }
func xreadgroupCmd(c *Ctx) { xreadGeneric(c, true) }

// xreadGeneric is xreadCommand (XREAD and XREADGROUP).
func xreadGeneric(c *Ctx, group bool) {
	if group {
		// propagated as what it did: XCLAIM, XGROUP SETID and CREATECONSUMER
		// (deliverToGroup), never as itself
		c.PreventPropagation()
	}
	argv := c.Argv
	timeout := int64(-1)
	var count int64
	streamsArg, nstreams := 0, 0
	noack := false
	minIdle := int64(-1) // CLAIM min-idle-time (Redis 8.4); -1: none
	var groupName, consumerName []byte
	for i := 1; i < len(argv); i++ {
		more := len(argv) - i - 1
		o := argv[i]
		switch {
		case eqFold(o, "claim") && more > 0:
			if !group {
				c.Error("ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			i++
			v, ok := resp.ParseInt(argv[i])
			if !ok {
				c.Error("ERR min-idle-time is not an integer or out of range")
				return
			}
			if v < 0 {
				c.Error("ERR min-idle-time must be a positive integer")
				return
			}
			minIdle = v
		case eqFold(o, "block") && more > 0:
			i++
			t, ok := parseTimeoutMs(c, argv[i])
			if !ok {
				return
			}
			timeout = t
		case eqFold(o, "count") && more > 0:
			i++
			v, ok := resp.ParseInt(argv[i])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			count = max(v, 0)
		case eqFold(o, "streams") && more > 0:
			streamsArg = i + 1
			nstreams = len(argv) - streamsArg
			if nstreams%2 != 0 {
				if group {
					c.Error("ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be specified.")
				} else {
					c.Error("ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must be specified.")
				}
				return
			}
			nstreams /= 2
			i = len(argv)
		case eqFold(o, "group") && more >= 2:
			if !group {
				c.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			groupName, consumerName = argv[i+1], argv[i+2]
			i += 2
		case eqFold(o, "noack"):
			if !group {
				c.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			noack = true
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if streamsArg == 0 {
		c.Err(ErrSyntax)
		return
	}
	if group && groupName == nil {
		c.Error("ERR Missing GROUP option for XREADGROUP")
		return
	}
	ids := make([]keyspace.StreamID, nstreams)
	groups := make([]*keyspace.StreamCG, nstreams)
	dollar := make([]bool, nstreams)
	for k := 0; k < nstreams; k++ {
		key := argv[streamsArg+k]
		idArg := argv[streamsArg+nstreams+k]
		s, ok := lookupStream(c, key, false)
		if !ok {
			return
		}
		if groupName != nil {
			var cg *keyspace.StreamCG
			if s != nil {
				cg = s.LookupCG(groupName)
			}
			if cg == nil {
				c.Error("NOGROUP No such key '" + sanitize(key) + "' or consumer group '" + sanitize(groupName) + "' in XREADGROUP with GROUP option")
				return
			}
			groups[k] = cg
		}
		switch string(idArg) {
		case "$":
			if group {
				c.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			if s != nil {
				ids[k] = s.LastID
			}
			dollar[k] = true
			continue
		case "+":
			if group {
				c.Error("ERR The + ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The + ID would just return an empty result set.")
				return
			}
			if s != nil && s.Len() > 0 {
				last, _ := s.LastValidID()
				ids[k], _ = last.Decr()
			}
			continue
		case ">":
			if !group {
				c.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			ids[k] = keyspace.MaxStreamID
			continue
		}
		id, ok := streamIDArg(c, idArg, true)
		if !ok {
			return
		}
		ids[k] = id
	}

	var top deferred
	served := 0
	var sc streamScratch
	minPelTime := int64(math.MaxInt64) // the oldest delivery CLAIM waits on
	for k := 0; k < nstreams; k++ {
		key := argv[streamsArg+k]
		s, _ := lookupStream(c, key, false)
		if s == nil {
			continue
		}
		if group {
			c.DB.Changing(key) // the group changes: snapshots take the stream first
		}
		gt := ids[k]
		serve, history, serveClaimed := false, false, false
		var consumer *keyspace.StreamConsumer
		if group {
			cg := groups[k]
			if minIdle != -1 {
				// the oldest pending delivery of an entry still there: is it
				// idle enough to claim?
				for _, n := range cg.TimeOrder() {
					if !s.Exists(n.ID) {
						continue
					}
					minPelTime = min(minPelTime, n.DeliveryTime)
					serveClaimed = uint64(c.Now-n.DeliveryTime) >= uint64(minIdle)
					break
				}
			}
			if gt != keyspace.MaxStreamID {
				serve, history = true, true
			} else if s.Len() > 0 {
				if maxid, _ := s.LastValidID(); maxid.Cmp(cg.LastID) > 0 {
					serve = true
					gt = cg.LastID
				}
			}
			consumer = cg.LookupConsumer(consumerName)
			if consumer == nil {
				consumer = cg.CreateConsumer(consumerName, c.Now)
				c.Dirty++
				c.Notify('t', "xgroup-createconsumer", key)
				if noack {
					// no XCLAIM will create it (streamPropagateConsumerCreation)
					c.AlsoPropagate(wXgroup, wCreateconsumer, key, groupName, consumerName)
				}
			}
			consumer.SeenTime = c.Now
		} else if s.Len() > 0 {
			if maxid, _ := s.LastValidID(); maxid.Cmp(gt) > 0 {
				serve = true
			}
		}
		claimedOnly := false
		if history {
			minIdle = -1 // CLAIM is ignored when serving history (for the next keys too, as Redis)
		} else if !serve && serveClaimed {
			serve, claimedOnly = true, true
		}
		if !serve {
			continue
		}
		served++
		if served == 1 {
			top = deferLen(c)
		}
		start, _ := gt.Incr()
		if c.W.Proto != 3 {
			c.W.ArrayLen(2)
		}
		c.W.Bulk(key)
		switch {
		case history:
			replyConsumerPEL(c, s, groups[k], consumer, start, count, &sc)
		case group:
			if deliverToGroup(c, key, groupName, s, groups[k], consumer, start, count, noack, minIdle, claimedOnly, &sc) {
				c.Dirty++
			}
		default:
			replyRange(c, s, start, keyspace.MaxStreamID, count, false)
		}
	}
	if served > 0 {
		if c.W.Proto == 3 {
			top.set(c, '%', served) // XREAD's RESP3 reply is a map of key -> entries
		} else {
			top.set(c, '*', served)
		}
		return
	}
	if timeout != -1 {
		if !c.MayBlock() {
			c.W.NullArray()
			return
		}
		// $ becomes the last ID now, so that the command, run again when a key
		// is ready, waits for entries after it (as Redis rewrites argv)
		blockArgv := argv
		for k := 0; k < nstreams; k++ {
			if dollar[k] {
				if &blockArgv[0] == &argv[0] {
					blockArgv = append([][]byte(nil), argv...)
				}
				blockArgv[streamsArg+nstreams+k] = ids[k].Append(nil)
			}
		}
		c.Argv = blockArgv
		keys := argv[streamsArg : streamsArg+nstreams]
		// XREADGROUP runs again when a key is deleted too, and fails
		// (Redis's unblock_on_nokey); with CLAIM also when the oldest
		// pending entry becomes idle enough (or after min-idle-time when
		// none is pending: trackStreamClaimTimeouts)
		on := BlockOn{Kind: keyspace.KindStream, Keys: keys, Deadline: timeout, UnblockOnNoKey: group}
		if minIdle != -1 {
			if minPelTime != math.MaxInt64 {
				on.WakeAt = minPelTime + minIdle
			} else {
				on.WakeAt = c.Now + minIdle
			}
		}
		if c.BlockOn(on) {
			return
		}
	}
	c.W.NullArray()
}

// deliverToGroup is streamReplyWithRange with a group: entries after start
// go to consumer (pending unless noack), the group's last ID and read counter
// advance. With CLAIM (minIdle != -1, Redis 8.4) the group's pending entries
// idle for minIdle ms come first, oldest delivery first, claimed by consumer
// (one more delivery, now); every entry is then [id, fields, idle, deliveries]
// (new ones 0 and 0); claimedOnly serves only those. It reports whether
// anything was propagated (Redis's propCount).
//
// XREADGROUP propagates what it did instead of itself (Redis's
// streamReplyWithRange): each delivery (a claim, or a new entry unless
// NOACK) as an idempotent XCLAIM key group consumer 0 id TIME now
// RETRYCOUNT deliveries FORCE JUSTID LASTID <the group's last ID before
// the call>, then XGROUP SETID key group <last ID> ENTRIESREAD n when the
// last ID moved. A replica or an AOF replay thus gets the same PEL,
// delivery times and counters, whatever the stream holds then.
func deliverToGroup(c *Ctx, key, groupName []byte, s *keyspace.Stream, cg *keyspace.StreamCG, consumer *keyspace.StreamConsumer,
	start keyspace.StreamID, count int64, noack bool, minIdle int64, claimedOnly bool, sc *streamScratch) bool {
	d := deferLen(c)
	var n int64
	prop := false
	var lastBefore []byte
	propagating := c.Propagating()
	if propagating {
		lastBefore = cg.LastID.Append(nil)
	}
	xclaim := func(nack *keyspace.StreamNACK) {
		if propagating {
			c.AlsoPropagate(wXclaim, key, groupName, []byte(consumer.Name), wZero, nack.ID.Append(nil), wTime, c.PropInt(c.Now),
				wRetrycount, c.PropInt(nack.DeliveryCount), wForce, wJustid, wLastid, lastBefore)
		}
	}
	if minIdle != -1 {
		for _, nack := range cg.TimeOrder() {
			idle := c.Now - nack.DeliveryTime
			if uint64(idle) < uint64(minIdle) {
				break
			}
			e, ok := s.Get(nack.ID)
			if !ok {
				continue // deleted: it stays pending, unclaimed
			}
			c.W.ArrayLen(4)
			replyEntryBody(c, e, sc)
			c.W.Int(idle)
			c.W.Int(nack.DeliveryCount)
			claimTo(nack, consumer)
			nack.DeliveryCount++
			cg.Deliver(nack, c.Now)
			consumer.ActiveTime = c.Now
			xclaim(nack)
			prop = true
			if n++; count != 0 && n >= count {
				break
			}
		}
		if claimedOnly || (count != 0 && n >= count) {
			d.set(c, '*', int(n))
			return prop
		}
	}
	var delivered []keyspace.StreamID
	lastMoved := false
	s.Range(start, keyspace.MaxStreamID, false, func(e *keyspace.StreamEntry) bool {
		if e.ID.Cmp(cg.LastID) > 0 {
			if cg.EntriesRead != -1 && cg.LastID.Cmp(s.FirstID) >= 0 && !s.RangeHasTombstones(cg.LastID, keyspace.MaxStreamID) {
				cg.EntriesRead++
			} else if s.EntriesAdded != 0 {
				cg.EntriesRead = s.EstimateDistanceFromFirstEverEntry(e.ID)
			}
			cg.LastID = e.ID
			lastMoved = true
			prop = true
		}
		if minIdle != -1 {
			c.W.ArrayLen(4)
			replyEntryBody(c, e, sc)
			c.W.Int(0)
			c.W.Int(0)
		} else {
			replyEntry(c, e, sc)
		}
		if !noack {
			delivered = append(delivered, e.ID)
		}
		n++
		return count == 0 || n < count
	})
	for _, id := range delivered {
		nack := cg.PEL.Find(id)
		if nack == nil {
			nack = &keyspace.StreamNACK{ID: id, DeliveryCount: 1, Consumer: consumer}
			cg.Deliver(nack, c.Now)
			cg.PEL.Insert(nack)
			consumer.PEL.Insert(nack)
		} else {
			if nack.Consumer != nil {
				nack.Consumer.PEL.Remove(id)
			}
			nack.Consumer = consumer
			cg.Deliver(nack, c.Now)
			nack.DeliveryCount = 1
			consumer.PEL.Insert(nack)
		}
		consumer.ActiveTime = c.Now
		xclaim(nack)
		prop = true
	}
	if lastMoved && propagating {
		c.AlsoPropagate(wXgroup, wSetid, key, groupName, cg.LastID.Append(nil), wEntriesread, c.PropInt(cg.EntriesRead))
	}
	d.set(c, '*', int(n))
	return prop
}

var (
	wXclaim, wXgroup, wSetid, wCreateconsumer = []byte("XCLAIM"), []byte("XGROUP"), []byte("SETID"), []byte("CREATECONSUMER")
	wTime, wRetrycount, wForce, wJustid       = []byte("TIME"), []byte("RETRYCOUNT"), []byte("FORCE"), []byte("JUSTID")
	wLastid, wEntriesread, wZero              = []byte("LASTID"), []byte("ENTRIESREAD"), []byte("0")
)

// replyConsumerPEL is streamReplyWithRangeFromConsumerPEL: the consumer's
// pending entries from start, each with its fields, or nil fields when the
// entry is gone; delivered entries count one more delivery.
func replyConsumerPEL(c *Ctx, s *keyspace.Stream, cg *keyspace.StreamCG, consumer *keyspace.StreamConsumer, start keyspace.StreamID, count int64, sc *streamScratch) {
	d := deferLen(c)
	var n int64
	consumer.PEL.Ascend(start, func(nack *keyspace.StreamNACK) bool {
		if count != 0 && n >= count {
			return false
		}
		if e, ok := s.Get(nack.ID); ok {
			replyEntry(c, e, sc)
			cg.Deliver(nack, c.Now)
			nack.DeliveryCount++
		} else {
			c.W.ArrayLen(2)
			replyStreamID(c, nack.ID)
			c.W.NullArray()
		}
		n++
		return true
	})
	d.set(c, '*', int(n))
}

// ---- XSETID ----

// xsetidCmd: XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]
func xsetidCmd(c *Ctx) {
	id, ok := streamIDArg(c, c.Argv[2], true)
	if !ok {
		return
	}
	entriesAdded := int64(-1)
	var maxXdel keyspace.StreamID
	for i := 3; i < len(c.Argv); i += 2 {
		more := len(c.Argv) - 1 - i
		switch {
		case eqFold(c.Argv[i], "entriesadded") && more > 0:
			v, ok := resp.ParseInt(c.Argv[i+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < 0 {
				c.Error("ERR entries_added must be positive")
				return
			}
			entriesAdded = v
		case eqFold(c.Argv[i], "maxdeletedid") && more > 0:
			v, ok := streamIDArg(c, c.Argv[i+1], true)
			if !ok {
				return
			}
			if id.Cmp(v) < 0 {
				c.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			maxXdel = v
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	e := c.DB.LookupWrite(c.Argv[1])
	if e == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	if e.Kind != keyspace.KindStream {
		c.Err(ErrWrongType)
		return
	}
	s := e.Obj().(*keyspace.Stream)
	if id.Cmp(s.MaxDeletedID) < 0 {
		c.Error("ERR The ID specified in XSETID is smaller than current max_deleted_entry_id")
		return
	}
	if s.Len() > 0 {
		maxid, _ := s.LastValidID()
		if id.Cmp(maxid) < 0 {
			c.Error("ERR The ID specified in XSETID is smaller than the target stream top item")
			return
		}
		if entriesAdded != -1 && int64(s.Len()) > entriesAdded {
			c.Error("ERR The entries_added specified in XSETID is smaller than the target stream length")
			return
		}
	}
	s.LastID = id
	if entriesAdded != -1 {
		s.EntriesAdded = uint64(entriesAdded)
	}
	if !maxXdel.IsZero() {
		s.MaxDeletedID = maxXdel
	}
	c.W.SimpleString("OK")
	c.Dirty++
	c.Notify('t', "xsetid", c.Argv[1])
}
