package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/rdb/crc64"
)

// Stream is a keyspace snapshot (keyspace.Snapshot) encoded as it goes:
// NewStream starts it; each Step, under the engine lock, hands out the keys
// the snapshot has not handed out yet, about max of them, and returns every
// byte encoded since the last Step (including the keys that writes made the
// snapshot hand out early), which the caller writes without the lock. The
// keys of one database may be interleaved with another's: a SELECTDB
// precedes each change of database, and the first one of each database is
// followed by its RESIZEDB sizes of the snapshot's start, so the file loads
// in Redis and in HotKV like one written in a single pass.
//
// An RDB Stream writes version 13 (rdbSaveRio): the REDIS0013 magic, AUX
// fields (redis-ver, redis-bits, ctime, used-mem, aof-base), the function
// libraries, the keys (EXPIRETIME_MS before a key with a TTL; keys whose
// deadline passed but that were not deleted yet are written, as Redis
// does), EOF and the CRC64. NewCommandStream makes a stream of commands
// instead (an AOF base without the RDB preamble).
type Stream struct {
	snap     *keyspace.Snapshot
	buf      []byte // encoded since the last Step
	spare    []byte // the chunk the last Step returned, reused next
	key      KeyEncoder
	rdb      bool // an RDB file: EOF and the checksum end it
	checksum bool
	compress bool
	crc      uint64
	cur      int            // the database of the last SELECTDB (-1: none yet)
	sizes    map[int][2]int // RESIZEDB of the databases not yet selected
	closed   bool           // abandoned
	fin      bool           // the last chunk was handed out
	keys     int            // handed out, once the snapshot is closed
}

// KeyEncoder appends the encoding of one key (as the snapshot hands it
// out: its database, key, value and deadline) to b. It must only read e.
type KeyEncoder func(b []byte, db int, key string, e *keyspace.Entry, expireAt int64) []byte

// ErrSnapshotBroken is a Stream's error when a key changed before the
// snapshot handed it out (keyspace.Snapshot.Broken): the file would mix two
// moments, so it is not written.
var ErrSnapshotBroken = errors.New("the snapshot missed a change (a write path without a snapshot hook)")

var errStreamClosed = errors.New("snapshot abandoned")

// NewStream starts an RDB snapshot of ks (engine lock).
func NewStream(ks *keyspace.Keyspace, info SaveInfo) *Stream {
	s := &Stream{rdb: true, checksum: info.Checksum, compress: info.Compress, cur: -1}
	b := fmt.Appendf(nil, "REDIS%04d", Version)
	aux := func(k, v string) {
		b = append(b, opAux)
		b = AppendString(b, []byte(k), info.Compress)
		b = AppendString(b, []byte(v), info.Compress)
	}
	aux("redis-ver", info.RedisVersion)
	aux("redis-bits", "64")
	aux("ctime", strconv.FormatInt(info.CTime, 10))
	aux("used-mem", strconv.FormatInt(info.UsedMem, 10))
	if r := info.Repl; r != nil {
		aux("repl-stream-db", strconv.Itoa(r.StreamDB))
		aux("repl-id", r.ID)
		aux("repl-offset", strconv.FormatInt(r.Offset, 10))
	}
	aofBase := "0"
	if info.AOFBase {
		aofBase = "1"
	}
	aux("aof-base", aofBase)
	for _, code := range info.Functions {
		b = append(b, opFunction2)
		b = AppendString(b, []byte(code), info.Compress)
	}
	s.buf = b
	s.key = s.appendRecord
	if !info.NoKeys {
		s.start(ks, info.KeyDelay)
	}
	return s
}

// NewCommandStream starts a snapshot of ks whose bytes are head, then key's
// encoding of each key (engine lock). key sees the database of each key; it
// emits its own SELECTs.
func NewCommandStream(ks *keyspace.Keyspace, head []byte, key KeyEncoder) *Stream {
	s := &Stream{buf: head, key: key, cur: -1}
	s.start(ks, nil)
	return s
}

func (s *Stream) start(ks *keyspace.Keyspace, keyDelay func()) {
	s.snap = ks.StartSnapshot(func(db int, key string, e *keyspace.Entry, at int64) {
		s.buf = s.key(s.buf, db, key, e, at)
		if keyDelay != nil {
			keyDelay()
		}
	})
	s.snap.Full = func() bool { return len(s.buf) >= stepBytes }
	s.sizes = map[int][2]int{}
	for _, d := range s.snap.DBs() {
		s.sizes[d.ID] = [2]int{d.Keys, d.Expires}
	}
}

// appendRecord is the RDB KeyEncoder: SELECTDB (and the first time RESIZEDB)
// when the database changes, EXPIRETIME_MS, the type, the key and the value.
func (s *Stream) appendRecord(b []byte, db int, key string, e *keyspace.Entry, at int64) []byte {
	if db != s.cur {
		b = append(b, opSelectDB)
		b = AppendLen(b, uint64(db))
		if sz, ok := s.sizes[db]; ok {
			b = append(b, opResizeDB)
			b = AppendLen(b, uint64(sz[0]))
			b = AppendLen(b, uint64(sz[1]))
			delete(s.sizes, db)
		}
		s.cur = db
	}
	if at != 0 {
		b = appendMillis(append(b, opExpireTimeMs), at)
	}
	b = append(b, ValueType(e))
	b = AppendString(b, []byte(key), s.compress)
	return appendBody(b, e, s.compress)
}

// stepBytes bounds a Step's chunk: it ends after the key that took the
// chunk past it. Without the bound a step of 64 keys of a few MB each
// built one chunk of hundreds of MB under the engine lock (a 80 MB
// dataset of big values went in a single step), and the growing buffer
// cost a page fault per 4 KiB.
const stepBytes = 1 << 20

// Step hands out about max more keys and returns the bytes encoded since the
// last Step, valid until the next one; done reports the end of the stream
// (the chunk then ends the file). Engine lock.
func (s *Stream) Step(max int) (chunk []byte, done bool, err error) {
	switch {
	case s.fin:
		return nil, true, nil
	case s.closed:
		return nil, true, errStreamClosed
	}
	done = s.snap == nil || s.snap.Step(max)
	if s.snap != nil && s.snap.Broken {
		return nil, true, ErrSnapshotBroken
	}
	if done && s.rdb {
		s.buf = append(s.buf, opEOF)
	}
	chunk = s.buf
	if s.rdb {
		s.crc = crc64.Update(s.crc, chunk)
		if done {
			sum := s.crc
			if !s.checksum {
				sum = 0
			}
			chunk = binary.LittleEndian.AppendUint64(chunk, sum)
		}
	}
	s.buf, s.spare = s.spare[:0], chunk
	if done {
		s.keys = s.Keys()
		s.Close()
		s.fin = true
		s.buf, s.spare = nil, nil
	}
	return chunk, done, nil
}

// Close abandons the snapshot (or releases a finished one). Engine lock.
func (s *Stream) Close() {
	if s.snap != nil {
		s.snap.Close()
		s.snap = nil
	}
	s.closed = true
}

// Keys is the number of keys handed out so far.
func (s *Stream) Keys() int {
	if s.snap == nil {
		return s.keys
	}
	return s.snap.Emitted
}
