package server

import (
	"encoding/binary"
	"errors"
	"io"
	"strconv"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/script"
)

// SnapshotFunc writes the whole dataset as an RDB file to w: SYNC's payload.
// It runs under the engine lock (the dataset does not change meanwhile).
type SnapshotFunc func(w io.Writer) error

// SetSnapshot replaces the snapshot writer (internal/rdb's full writer
// replaces the interim one below when the branches merge).
func (s *Server) SetSnapshot(f SnapshotFunc) {
	s.eng.Lock()
	s.snapshotFn = f
	s.eng.Unlock()
}

func (s *Server) snapshot(w io.Writer) error {
	if s.snapshotFn != nil {
		return s.snapshotFn(w)
	}
	return writeStringsRDB(w, s.ks, s.clock.NowMs())
}

// RDB opcodes and types (Redis's rdb.h).
const (
	rdbOpAux          = 0xFA
	rdbOpResizeDB     = 0xFB
	rdbOpExpireTimeMs = 0xFC
	rdbOpSelectDB     = 0xFE
	rdbOpEOF          = 0xFF
	rdbTypeString     = 0
)

// writeStringsRDB is the interim snapshot writer: a valid RDB version 12 file
// (AUX fields, SELECTDB + RESIZEDB per non-empty database, string keys with
// their deadlines, EOF, CRC64) that refuses any other type. The full writer is
// internal/rdb's (branch dump).
func writeStringsRDB(w io.Writer, ks *keyspace.Keyspace, nowMs int64) error {
	b := []byte("REDIS0012")
	aux := func(k, v string) {
		b = append(b, rdbOpAux)
		b = rdbString(b, []byte(k))
		b = rdbString(b, []byte(v))
	}
	aux("redis-ver", command.Version)
	aux("redis-bits", "64")
	aux("ctime", strconv.FormatInt(nowMs/1000, 10))
	aux("used-mem", "0")
	aux("aof-base", "0")
	for _, db := range ks.DBs {
		var n, exp int
		var bad error
		db.Range(func(key string, e *keyspace.Entry) bool {
			if e.Kind != keyspace.KindString {
				bad = errors.New("HotKV's interim snapshot writer cannot encode key '" + key +
					"' (not a string); replication of this dataset needs internal/rdb")
				return false
			}
			n++
			if e.ExpireAt != 0 {
				exp++
			}
			return true
		})
		if bad != nil {
			return bad
		}
		if n == 0 {
			continue
		}
		b = append(b, rdbOpSelectDB)
		b = rdbLen(b, uint64(db.ID))
		b = append(b, rdbOpResizeDB)
		b = rdbLen(b, uint64(n))
		b = rdbLen(b, uint64(exp))
		db.Range(func(key string, e *keyspace.Entry) bool {
			if e.ExpireAt != 0 {
				b = append(b, rdbOpExpireTimeMs)
				b = binary.LittleEndian.AppendUint64(b, uint64(e.ExpireAt))
			}
			b = append(b, rdbTypeString)
			b = rdbString(b, []byte(key))
			b = rdbString(b, e.Str)
			return true
		})
	}
	b = append(b, rdbOpEOF)
	b = binary.LittleEndian.AppendUint64(b, script.CRC64(0, b))
	_, err := w.Write(b)
	return err
}

// rdbLen appends an RDB length (6, 14, 32 or 64 bits).
func rdbLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= 0xFFFFFFFF:
		return binary.BigEndian.AppendUint32(append(b, 0x80), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0x81), n)
}

// rdbString appends a raw (length-prefixed, uncompressed) RDB string.
func rdbString(b, s []byte) []byte { return append(rdbLen(b, uint64(len(s))), s...) }
