package rdb

import (
	"encoding/binary"
	"math"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// ValueType is rdbSaveObjectType: the RDB type byte Redis writes for e.
func ValueType(e *keyspace.Entry) byte {
	switch e.Kind {
	case keyspace.KindList:
		return TypeListQuicklist2
	case keyspace.KindSet:
		switch e.Obj().(*keyspace.Set).SetEnc() {
		case keyspace.SetIntset:
			return TypeSetIntset
		case keyspace.SetListpack:
			return TypeSetListpack
		}
		return TypeSet
	case keyspace.KindZSet:
		if e.Obj().(*keyspace.ZSet).IsCompact() {
			return TypeZSetListpack
		}
		return TypeZSet2
	case keyspace.KindHash:
		h := e.Obj().(*keyspace.Hash)
		switch h.Encoding() {
		case "listpack":
			return TypeHashListpack
		case "listpackex":
			return TypeHashListpackEx
		}
		if h.FieldTTLs() > 0 {
			return TypeHashMetadata
		}
		return TypeHash
	case keyspace.KindStream:
		return TypeStreamListpacks4
	}
	return TypeString
}

// AppendValue appends e's RDB type byte and value (rdbSaveObjectType, then
// rdbSaveObject), compressing strings longer than 20 bytes when compress.
func AppendValue(b []byte, e *keyspace.Entry, compress bool) []byte {
	return appendBody(append(b, ValueType(e)), e, compress)
}

// appendBody is rdbSaveObject: e's value without its type byte.
func appendBody(b []byte, e *keyspace.Entry, compress bool) []byte {
	t := ValueType(e)
	switch e.Kind {
	case keyspace.KindString:
		return AppendString(b, e.Bytes(), compress)
	case keyspace.KindList:
		return appendList(b, e.Obj().(*keyspace.List), compress)
	case keyspace.KindSet:
		return appendSet(b, t, e.Obj().(*keyspace.Set), compress)
	case keyspace.KindZSet:
		return appendZSet(b, t, e.Obj().(*keyspace.ZSet), compress)
	case keyspace.KindHash:
		return appendHash(b, t, e.Obj().(*keyspace.Hash), compress)
	case keyspace.KindStream:
		return appendStream(b, e.Obj().(*keyspace.Stream), compress)
	}
	panic("rdb: unsupported value kind " + e.Kind.String())
}

// appendList writes a QUICKLIST_2: the node count, then per node its container
// and its listpack (or, for a plain node, its element) as a string.
func appendList(b []byte, l *keyspace.List, compress bool) []byte {
	nodes := 0
	l.ForEachNode(func([][]byte, bool) { nodes++ })
	b = AppendLen(b, uint64(nodes))
	l.ForEachNode(func(elems [][]byte, plain bool) {
		if plain {
			b = AppendLen(b, containerPlain)
			b = AppendString(b, elems[0], compress)
			return
		}
		b = AppendLen(b, containerPacked)
		lp := newLP(estimateLP(elems))
		for _, v := range elems {
			lp.Str(v)
		}
		b = AppendString(b, lp.Bytes(), compress)
	})
	return b
}

func appendSet(b []byte, t byte, s *keyspace.Set, compress bool) []byte {
	switch t {
	case TypeSetIntset:
		w, data := s.IntsetRaw()
		return AppendString(b, appendIntset(make([]byte, 0, 8+len(data)), w, data), compress)
	case TypeSetListpack:
		lp := newLP(s.Len() * 8)
		s.Range(func(m []byte) bool {
			lp.Str(m)
			return true
		})
		return AppendString(b, lp.Bytes(), compress)
	}
	b = AppendLen(b, uint64(s.Len()))
	s.Range(func(m []byte) bool {
		b = AppendString(b, m, compress)
		return true
	})
	return b
}

// appendScore writes a listpack score as zzlInsertAt does: an integer when
// double2ll converts it exactly, else d2string's text.
func appendScore(lp *lpBuilder, f float64) {
	if f >= -math.MaxInt64/2 && f <= math.MaxInt64/2 && f == math.Trunc(f) {
		lp.Int(int64(f))
		return
	}
	var tmp [32]byte
	lp.Str(resp.FormatDouble(tmp[:0], f))
}

func appendZSet(b []byte, t byte, z *keyspace.ZSet, compress bool) []byte {
	if t == TypeZSetListpack {
		lp := newLP(z.Len() * 12)
		z.Range(func(m []byte, score float64) {
			lp.Str(m)
			appendScore(lp, score)
		})
		return AppendString(b, lp.Bytes(), compress)
	}
	b = AppendLen(b, uint64(z.Len()))
	z.RangeDesc(func(m []byte, score float64) {
		b = AppendString(b, m, compress)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(score))
	})
	return b
}

func appendHash(b []byte, t byte, h *keyspace.Hash, compress bool) []byte {
	switch t {
	case TypeHashListpack, TypeHashListpackEx:
		ex := t == TypeHashListpackEx
		if ex {
			b = appendMillis(b, h.MinExpire())
		}
		lp := newLP(h.Len() * 16)
		h.Range(func(f, v []byte, exp int64) bool {
			lp.Str(f)
			lp.Str(v)
			if ex {
				lp.Int(exp)
			}
			return true
		})
		return AppendString(b, lp.Bytes(), compress)
	}
	meta := t == TypeHashMetadata
	minExp := h.MinExpire()
	if meta {
		b = appendMillis(b, minExp)
	}
	b = AppendLen(b, uint64(h.Len()))
	h.Range(func(f, v []byte, exp int64) bool {
		if meta {
			ttl := uint64(0)
			if exp != 0 {
				ttl = uint64(exp-minExp) + 1
			}
			b = AppendLen(b, ttl)
		}
		b = AppendString(b, f, compress)
		b = AppendString(b, v, compress)
		return true
	})
	return b
}

// appendStream is rdbSaveObject for a stream, as RDB_TYPE_STREAM_LISTPACKS_3:
// the nodes (16-byte big-endian master ID, listpack), length, last ID, first
// ID, max deleted ID, entries added, then each group with its PEL and
// consumers.
func appendStream(b []byte, s *keyspace.Stream, compress bool) []byte {
	b = AppendLen(b, uint64(s.NodeCount()))
	s.EachNode(func(master keyspace.StreamID, lp []byte) {
		var key [16]byte
		binary.BigEndian.PutUint64(key[:], master.Ms)
		binary.BigEndian.PutUint64(key[8:], master.Seq)
		b = AppendString(b, key[:], compress)
		b = AppendString(b, lp, compress)
	})
	b = AppendLen(b, s.Len())
	b = appendStreamID(b, s.LastID)
	b = appendStreamID(b, s.FirstID)
	b = appendStreamID(b, s.MaxDeletedID)
	b = AppendLen(b, s.EntriesAdded)
	groups := s.Groups()
	b = AppendLen(b, uint64(len(groups)))
	for _, cg := range groups {
		b = AppendString(b, []byte(cg.Name), compress)
		b = appendStreamID(b, cg.LastID)
		b = AppendLen(b, uint64(cg.EntriesRead))
		b = AppendLen(b, uint64(cg.PEL.Len()))
		cg.PEL.Ascend(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
			b = appendRawID(b, n.ID)
			b = appendMillis(b, n.DeliveryTime)
			b = AppendLen(b, uint64(n.DeliveryCount))
			return true
		})
		b = AppendLen(b, uint64(len(cg.Consumers())))
		for _, c := range cg.Consumers() {
			b = AppendString(b, []byte(c.Name), compress)
			b = appendMillis(b, c.SeenTime)
			b = appendMillis(b, c.ActiveTime)
			b = AppendLen(b, uint64(c.PEL.Len()))
			c.PEL.Ascend(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
				b = appendRawID(b, n.ID)
				return true
			})
		}
	}
	// RDB_TYPE_STREAM_LISTPACKS_4: the IDMP settings, records and counters
	b = AppendLen(b, s.IdmpDuration)
	b = AppendLen(b, s.IdmpMaxSize)
	b = AppendLen(b, uint64(s.IdmpProducers()))
	s.EachIdmpProducer(func(pid string, n int, records func(func(iid string, id keyspace.StreamID))) {
		b = AppendString(b, []byte(pid), compress)
		b = AppendLen(b, uint64(n))
		records(func(iid string, id keyspace.StreamID) {
			b = AppendString(b, []byte(iid), compress)
			b = appendStreamID(b, id)
		})
	})
	b = AppendLen(b, s.IidsAdded)
	return AppendLen(b, s.IidsDuplicates)
}

func appendStreamID(b []byte, id keyspace.StreamID) []byte {
	return AppendLen(AppendLen(b, id.Ms), id.Seq)
}

// appendRawID writes the 16-byte big-endian ID (rdbWriteRaw of streamEncodeID).
func appendRawID(b []byte, id keyspace.StreamID) []byte {
	b = binary.BigEndian.AppendUint64(b, id.Ms)
	return binary.BigEndian.AppendUint64(b, id.Seq)
}
