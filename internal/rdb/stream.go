package rdb

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
)

// stream is rdbLoadObject for RDB_TYPE_STREAM_LISTPACKS (Redis 5-6.2),
// _LISTPACKS_2 (7.0) and _LISTPACKS_3 (7.2+), with Redis's deep sanitisation
// of every listpack (streamValidateListpackIntegrity) and of the PELs.
func (d *decoder) stream(r *reader, t byte) (Value, error) {
	lim := keyspace.DefaultStreamLimits
	if d.ks != nil {
		lim = d.ks.Limits.StreamLimits()
	}
	l := keyspace.NewStreamLoader(lim)
	nodes, err := r.count(2)
	if err != nil {
		return Value{}, err
	}
	for range nodes {
		key, err := r.str()
		if err != nil {
			return Value{}, err
		}
		if len(key) != 16 {
			return Value{}, ErrBadData
		}
		lp, err := r.str()
		if err != nil {
			return Value{}, err
		}
		if !validStreamListpack(lp) {
			return Value{}, ErrBadData
		}
		master := keyspace.StreamID{Ms: binary.BigEndian.Uint64(key), Seq: binary.BigEndian.Uint64(key[8:])}
		if !l.AddNode(master, bytes.Clone(lp)) {
			return Value{}, ErrBadData
		}
	}
	length, err := r.length()
	if err != nil {
		return Value{}, err
	}
	if length != l.CountLive() {
		return Value{}, ErrBadData
	}
	l.SetLength(length)
	s := l.S
	if s.LastID, err = r.streamID(); err != nil {
		return Value{}, err
	}
	if t >= TypeStreamListpacks2 {
		if s.FirstID, err = r.streamID(); err != nil {
			return Value{}, err
		}
		if s.MaxDeletedID, err = r.streamID(); err != nil {
			return Value{}, err
		}
		if s.EntriesAdded, err = r.length(); err != nil {
			return Value{}, err
		}
	} else {
		// before 7.0: the counter starts at the length, the first ID is found
		s.EntriesAdded = length
		if length > 0 {
			s.FirstID = l.FirstLiveID()
		}
	}
	if length > 0 {
		if last, _ := s.LastValidID(); last.Cmp(s.LastID) > 0 {
			return Value{}, ErrBadData // an entry after the last ID
		}
	}
	ngroups, err := r.count(1)
	if err != nil {
		return Value{}, err
	}
	for range ngroups {
		name, err := r.str()
		if err != nil {
			return Value{}, err
		}
		last, err := r.streamID()
		if err != nil {
			return Value{}, err
		}
		var read int64
		if t >= TypeStreamListpacks2 {
			u, err := r.length()
			if err != nil {
				return Value{}, err
			}
			read = int64(u)
		} else {
			read = s.EstimateDistanceFromFirstEverEntry(last)
		}
		cg := l.AddGroup(name, last, read)
		if cg == nil {
			return Value{}, ErrBadData // a duplicate group
		}
		npel, err := r.count(17)
		if err != nil {
			return Value{}, err
		}
		for range npel {
			id, err := r.rawID()
			if err != nil {
				return Value{}, err
			}
			when, err := r.millis()
			if err != nil {
				return Value{}, err
			}
			cnt, err := r.length()
			if err != nil {
				return Value{}, err
			}
			if !cg.PEL.Insert(&keyspace.StreamNACK{ID: id, DeliveryTime: when, DeliveryCount: int64(cnt)}) {
				return Value{}, ErrBadData // a duplicate PEL entry
			}
		}
		ncons, err := r.count(9)
		if err != nil {
			return Value{}, err
		}
		for range ncons {
			cname, err := r.str()
			if err != nil {
				return Value{}, err
			}
			seen, err := r.millis()
			if err != nil {
				return Value{}, err
			}
			active := seen // the best estimate before 7.2
			if t >= TypeStreamListpacks3 {
				if active, err = r.millis(); err != nil {
					return Value{}, err
				}
			}
			c := l.AddConsumer(cg, cname, seen, active)
			if c == nil {
				return Value{}, ErrBadData // a duplicate consumer
			}
			n, err := r.count(16)
			if err != nil {
				return Value{}, err
			}
			for range n {
				id, err := r.rawID()
				if err != nil {
					return Value{}, err
				}
				nack := cg.PEL.Find(id)
				if nack == nil || nack.Consumer != nil {
					return Value{}, ErrBadData // not in the group PEL, or owned twice
				}
				nack.Consumer = c
				c.PEL.Insert(nack)
			}
		}
		orphan := false
		cg.PEL.Ascend(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
			orphan = n.Consumer == nil
			return !orphan
		})
		if orphan {
			return Value{}, ErrBadData // a pending entry without a consumer
		}
	}
	if t >= TypeStreamListpacks4 {
		if err := r.streamIDMP(l); err != nil {
			return Value{}, err
		}
	}
	return Value{Kind: keyspace.KindStream, Obj: s}, nil
}

// streamIDMP reads Redis 8.6's IDMP state of a stream (rdbLoadObject's
// RDB_TYPE_STREAM_LISTPACKS_4 part): the IDMP duration and size, each
// producer's records oldest first, the counts of IDs added and duplicates
// seen. A producer named twice is corrupt; a record repeated is skipped
// (rdbLoadStreamIdmpEntries).
func (r *reader) streamIDMP(l *keyspace.StreamLoader) error {
	dur, err := r.length()
	if err != nil {
		return err
	}
	size, err := r.length()
	if err != nil {
		return err
	}
	if dur < keyspace.IdmpMinDuration || dur > keyspace.IdmpMaxDuration ||
		size < keyspace.IdmpMinMaxSize || size > keyspace.IdmpMaxMaxSize {
		return ErrBadData
	}
	l.S.IdmpDuration, l.S.IdmpMaxSize = dur, size
	producers, err := r.count(2)
	if err != nil {
		return err
	}
	for range producers {
		pid, err := r.str()
		if err != nil {
			return err
		}
		if !l.AddIdmpProducer(pid) {
			return ErrBadData
		}
		n, err := r.count(3)
		if err != nil {
			return err
		}
		for range n {
			iid, err := r.str()
			if err != nil {
				return err
			}
			id, err := r.streamID()
			if err != nil {
				return err
			}
			l.AddIdmpRecord(pid, iid, id)
		}
	}
	if l.S.IidsAdded, err = r.length(); err != nil {
		return err
	}
	l.S.IidsDuplicates, err = r.length()
	return err
}

func (r *reader) streamID() (keyspace.StreamID, error) {
	ms, err := r.length()
	if err != nil {
		return keyspace.StreamID{}, err
	}
	seq, err := r.length()
	return keyspace.StreamID{Ms: ms, Seq: seq}, err
}

func (r *reader) rawID() (keyspace.StreamID, error) {
	p, err := r.bytes(16)
	if err != nil {
		return keyspace.StreamID{}, err
	}
	return keyspace.StreamID{Ms: binary.BigEndian.Uint64(p), Seq: binary.BigEndian.Uint64(p[8:])}, nil
}

// validStreamListpack is streamValidateListpackIntegrity in deep mode: a
// valid, non-empty listpack holding a master entry and count+deleted entries,
// each with its lp-count matching its fields.
func validStreamListpack(lp []byte) bool {
	var elems []lpValue
	if _, err := parseListpack(lp, func(e lpValue) error {
		elems = append(elems, e)
		return nil
	}); err != nil || len(elems) == 0 {
		return false
	}
	i := 0
	next := func() (int64, bool) {
		if i >= len(elems) {
			return 0, false
		}
		e := elems[i]
		i++
		if e.isInt {
			return e.v, true
		}
		v, err := strconv.ParseInt(string(e.s), 10, 64)
		return v, err == nil && strconv.FormatInt(v, 10) == string(e.s)
	}
	skip := func(n int64) bool {
		if n < 0 || int64(len(elems)-i) < n {
			return false
		}
		i += int(n)
		return true
	}
	count, ok1 := next()
	deleted, ok2 := next()
	master, ok3 := next()
	if !ok1 || !ok2 || !ok3 || !skip(master) {
		return false
	}
	if zero, ok := next(); !ok || zero != 0 {
		return false
	}
	total := count + deleted
	if count < 0 || deleted < 0 || total < 0 {
		return false
	}
	for ; total > 0; total-- {
		flags, ok := next()
		if !ok {
			return false
		}
		if _, ok := next(); !ok { // ms delta
			return false
		}
		if _, ok := next(); !ok { // seq delta
			return false
		}
		fields, extra := master, int64(3)
		if flags&2 == 0 {
			f, ok := next()
			if !ok || !skip(f) {
				return false
			}
			fields = f
			extra += f + 1
		}
		if !skip(fields) {
			return false
		}
		lpCount, ok := next()
		if !ok || lpCount != fields+extra {
			return false
		}
	}
	return i == len(elems)
}
