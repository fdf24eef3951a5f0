package command

import (
	"encoding/binary"
	"math/bits"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
	"github.com/zeebo/xxh3"
)

// Redis 8.6's idempotent producers: XADD's IDMP / IDMPAUTO options (in
// xaddCmd), XIDMPRECORD and XCFGSET. The records live in the stream
// (keyspace/stream_idmp.go).

var (
	wXidmprecord = []byte("XIDMPRECORD")
	wXtrim       = []byte("XTRIM")
	wEquals      = []byte("=")
)

// idmpAutoIID is IDMPAUTO's idempotency ID (createIdempotencyHash): per
// field-value pair, XXH3-128 of the field, its length as a little-endian
// 8-byte integer, and the value; the pair hashes are combined whatever their
// order (sums and XORs of each half, mixed by a 1-bit rotation), and the ID
// is the 16 bytes of Redis's XXH128_hash_t in memory (low half first,
// little-endian). The same pairs in any order give the same ID.
func idmpAutoIID(fv [][]byte) [16]byte {
	var sumLo, sumHi, xorLo, xorHi uint64
	var n [8]byte
	h := xxh3.New()
	for i := 0; i+1 < len(fv); i += 2 {
		h.Reset()
		h.Write(fv[i])
		binary.LittleEndian.PutUint64(n[:], uint64(len(fv[i])))
		h.Write(n[:])
		h.Write(fv[i+1])
		d := h.Sum128()
		sumLo += d.Lo
		sumHi += d.Hi
		xorLo ^= d.Lo
		xorHi ^= d.Hi
	}
	var out [16]byte
	binary.LittleEndian.PutUint64(out[:8], sumLo^bits.RotateLeft64(xorHi, 1))
	binary.LittleEndian.PutUint64(out[8:], sumHi^bits.RotateLeft64(xorLo, 1))
	return out
}

// xidmprecordCmd: XIDMPRECORD key pid iid id (Redis 8.6.2) records that
// producer pid's iid produced the existing entry id: OK, also when it
// already did; an error when the iid produced another entry.
func xidmprecordCmd(c *Ctx) {
	id, ok := streamIDArg(c, c.Argv[4], true)
	if !ok {
		return
	}
	pid, iid := c.Argv[2], c.Argv[3]
	if len(pid) == 0 {
		c.Error("ERR producer ID must be non-empty")
		return
	}
	if len(iid) == 0 {
		c.Error("ERR idempotent ID must be non-empty")
		return
	}
	key := c.Argv[1]
	e := c.DB.LookupWrite(key)
	if e == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	if e.Kind != keyspace.KindStream {
		c.Err(ErrWrongType)
		return
	}
	s := e.Obj().(*keyspace.Stream)
	if !s.Exists(id) {
		c.Error("ERR No such message in stream")
		return
	}
	s.IdmpExpire(c.Now)
	if old, found := s.IdmpLookup(pid, iid); found {
		if old != id {
			c.Error("ERR IID already exists for this producer with a different stream ID")
			return
		}
		c.W.SimpleString("OK")
		return
	}
	s.IdmpRecord(pid, iid, id)
	c.DB.IdmpChanged(s)
	c.W.SimpleString("OK")
	c.Dirty++
	c.DB.Touch(key)
}

// xcfgsetCmd: XCFGSET key [IDMP-DURATION seconds] [IDMP-MAXSIZE count]
// (Redis 8.6) sets the stream's IDMP settings; a value that differs from the
// stream's forgets all its records (the same value keeps them, so that every
// producer may set it before it starts).
func xcfgsetCmd(c *Ctx) {
	key := c.Argv[1]
	e := c.DB.LookupWrite(key)
	if e == nil {
		c.Err(ErrNoSuchKey)
		return
	}
	if e.Kind != keyspace.KindStream {
		c.Err(ErrWrongType)
		return
	}
	s := e.Obj().(*keyspace.Stream)
	duration, maxSize := int64(-1), int64(-1)
	for i := 2; i < len(c.Argv); i++ {
		more := len(c.Argv) - i - 1
		switch p := c.Argv[i]; {
		case eqFold(p, "idmp-duration") && more > 0:
			if duration != -1 {
				c.Error("ERR IDMP-DURATION specified multiple times")
				return
			}
			i++
			v, ok := resp.ParseInt(c.Argv[i])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < keyspace.IdmpMinDuration || v > keyspace.IdmpMaxDuration {
				c.Error("ERR IDMP-DURATION must be between 1 and 86400 seconds")
				return
			}
			duration = v
		case eqFold(p, "idmp-maxsize") && more > 0:
			if maxSize != -1 {
				c.Error("ERR IDMP-MAXSIZE specified multiple times")
				return
			}
			i++
			v, ok := resp.ParseInt(c.Argv[i])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			if v < keyspace.IdmpMinMaxSize || v > keyspace.IdmpMaxMaxSize {
				c.Error("ERR IDMP-MAXSIZE must be between 1 and 10000 entries")
				return
			}
			maxSize = v
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	if duration == -1 && maxSize == -1 {
		c.Error("ERR At least one parameter must be specified")
		return
	}
	if s.IdmpConfigure(uint64(max(duration, 0)), uint64(max(maxSize, 0))) {
		c.Dirty++
		c.DB.Touch(key)
	}
	c.W.SimpleString("OK")
}
