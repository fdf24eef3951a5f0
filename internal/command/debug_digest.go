package command

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// Redis's dataset digest (debug.c): SHA1 based, order independent across keys
// (xor) and order dependent inside a value (mix).

type digest [20]byte

func (d *digest) xor(b []byte) {
	h := sha1.Sum(b)
	for i := range d {
		d[i] ^= h[i]
	}
}

func (d *digest) mix(b []byte) {
	d.xor(b)
	*d = sha1.Sum(d[:])
}

// redisTypeCode is the OBJ_* type constant Redis hashes into a value digest.
func redisTypeCode(k keyspace.Kind) uint32 {
	switch k {
	case keyspace.KindList:
		return 1
	case keyspace.KindSet:
		return 2
	case keyspace.KindZSet:
		return 3
	case keyspace.KindHash:
		return 4
	case keyspace.KindStream:
		return 6
	}
	return 0
}

// xorEntryDigest is xorObjectDigest: the type, the value, and a marker if the key
// has a TTL.
func xorEntryDigest(d *digest, db *keyspace.DB, e *keyspace.Entry) {
	var aux [4]byte
	binary.BigEndian.PutUint32(aux[:], redisTypeCode(e.Kind))
	d.mix(aux[:])
	switch e.Kind {
	case keyspace.KindString:
		d.mix(e.Bytes())
	case keyspace.KindList:
		// each element mixed in, head to tail: the digest follows the order
		e.Obj().(*keyspace.List).Range(func(v []byte) bool {
			d.mix(v)
			return true
		})
	case keyspace.KindSet:
		// each member is xored in: the digest ignores the set's order
		e.Obj().(*keyspace.Set).Range(func(m []byte) bool {
			d.xor(m)
			return true
		})
	case keyspace.KindHash:
		// every field, expired or not; a field with a deadline is marked
		e.Obj().(*keyspace.Hash).Range(func(f, v []byte, exp int64) bool {
			var ed digest
			ed.mix(f)
			ed.mix(v)
			if exp != 0 {
				ed.xor([]byte("!!hexpire!!"))
			}
			d.xor(ed[:])
			return true
		})
	case keyspace.KindZSet:
		var buf [32]byte
		e.Obj().(*keyspace.ZSet).Range(func(m []byte, score float64) {
			var ed digest
			ed.mix(m)
			ed.mix(resp.AppendFpconv(buf[:0], score))
			d.xor(ed[:])
		})
	case keyspace.KindStream:
		// each live entry in ID order: "<ms>.<seq>", then its fields and values
		var sc []byte
		var idb [48]byte
		e.Obj().(*keyspace.Stream).Range(keyspace.StreamID{}, keyspace.MaxStreamID, false, func(en *keyspace.StreamEntry) bool {
			b := strconv.AppendUint(idb[:0], en.ID.Ms, 10)
			b = append(b, '.')
			d.mix(strconv.AppendUint(b, en.ID.Seq, 10))
			sc = en.Fields(sc, func(f, v []byte) {
				d.mix(f)
				d.mix(v)
			})
			return true
		})
	}
	if db.ExpireAt(e) != 0 {
		d.xor([]byte("!!expire!!"))
	}
}

func (d *digest) hex() string { return hex.EncodeToString(d[:]) }

// debugDigest is DEBUG DIGEST: one digest of every database's keys and values.
func debugDigest(c *Ctx) {
	var final digest
	for _, db := range c.KS.DBs {
		if db.Len() == 0 {
			continue
		}
		var aux [4]byte
		binary.BigEndian.PutUint32(aux[:], uint32(db.ID))
		final.mix(aux[:])
		db.Range(func(k string, e *keyspace.Entry) bool {
			var d digest
			d.mix([]byte(k))
			xorEntryDigest(&d, db, e)
			final.xor(d[:])
			return true
		})
	}
	c.W.SimpleString(final.hex())
}

// debugDigestValue is DEBUG DIGEST-VALUE key [key ...]: each value's digest,
// forty zeros for a missing key.
func debugDigestValue(c *Ctx, keys [][]byte) {
	c.W.ArrayLen(len(keys))
	for _, k := range keys {
		var d digest
		if e := c.DB.Lookup(k); e != nil {
			xorEntryDigest(&d, c.DB, e)
		}
		c.W.SimpleString(d.hex())
	}
}
