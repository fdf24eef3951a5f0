package command

import (
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// lcsCmd: LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN], a port of
// Redis's lcsCommand (t_string.c): the same DP table, the same backward walk and
// therefore the same ranges in the same order.
func lcsCmd(c *Ctx) {
	ea := c.DB.LookupRead(c.Argv[1], c.Client.NoTouch)
	eb := c.DB.LookupRead(c.Argv[2], c.Client.NoTouch)
	if (ea != nil && ea.Kind != keyspace.KindString) || (eb != nil && eb.Kind != keyspace.KindString) {
		c.Error("ERR The specified keys must contain string values")
		return
	}
	var a, b []byte
	if ea != nil {
		a = ea.Bytes()
	}
	if eb != nil {
		b = eb.Bytes()
	}
	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(c.Argv); j++ {
		opt := c.Argv[j]
		more := len(c.Argv) - 1 - j
		switch {
		case eqFold(opt, "idx"):
			getIdx = true
		case eqFold(opt, "len"):
			getLen = true
		case eqFold(opt, "withmatchlen"):
			withMatchLen = true
		case eqFold(opt, "minmatchlen") && more > 0:
			v, ok := resp.ParseInt(c.Argv[j+1])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			minMatchLen = max(v, 0)
			j++
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if getIdx && getLen {
		c.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	alen, blen := len(a), len(b)
	size := int64(alen+1) * int64(blen+1) * 4
	if size > c.Srv.ProtoMaxBulkLen() {
		c.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	w := blen + 1
	dp := make([]uint32, (alen+1)*w)
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			if a[i-1] == b[j-1] {
				dp[i*w+j] = dp[(i-1)*w+j-1] + 1
			} else {
				dp[i*w+j] = max(dp[(i-1)*w+j], dp[i*w+j-1])
			}
		}
	}
	total := dp[alen*w+blen]
	if getLen {
		c.W.Int(int64(total))
		return
	}
	result := make([]byte, total)
	idx := total
	type rng struct{ a0, a1, b0, b1 int }
	var ranges []rng
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0 // aStart == alen: no open range
	i, j := alen, blen
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if dp[(i-1)*w+j] > dp[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			if minMatchLen == 0 || int64(aEnd-aStart+1) >= minMatchLen {
				ranges = append(ranges, rng{aStart, aEnd, bStart, bEnd})
			}
			aStart = alen
		}
	}
	if !getIdx {
		c.W.Bulk(result)
		return
	}
	c.W.MapLen(2)
	c.W.BulkString("matches")
	c.W.ArrayLen(len(ranges))
	for _, r := range ranges {
		if withMatchLen {
			c.W.ArrayLen(3)
		} else {
			c.W.ArrayLen(2)
		}
		c.W.ArrayLen(2)
		c.W.Int(int64(r.a0))
		c.W.Int(int64(r.a1))
		c.W.ArrayLen(2)
		c.W.Int(int64(r.b0))
		c.W.Int(int64(r.b1))
		if withMatchLen {
			c.W.Int(int64(r.a1 - r.a0 + 1))
		}
	}
	c.W.BulkString("len")
	c.W.Int(int64(total))
}
