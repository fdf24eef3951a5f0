package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
)

// SaveInfo is what an RDB file records besides the keyspace.
type SaveInfo struct {
	RedisVersion string   // the "redis-ver" AUX field
	CTime        int64    // Unix seconds, the "ctime" AUX field
	UsedMem      int64    // the "used-mem" AUX field
	Functions    []string // the function libraries' code (FUNCTION2 records)
	Compress     bool     // rdbcompression
	Checksum     bool     // rdbchecksum: without it the trailing CRC64 is 0
	// KeyDelay, when not nil, runs after each key is written
	// (rdb-key-save-delay)
	KeyDelay func()
	// NoKeys writes no database: the file holds the AUX fields and the
	// function libraries only (REPLCONF rdb-filter-only).
	NoKeys bool
	// AOFBase marks an AOF's base file (the "aof-base" AUX field).
	AOFBase bool
	// Repl, when set, is the replication state the file records
	// (repl-stream-db, repl-id, repl-offset), so that a restarted server
	// continues its history with a partial resync.
	Repl *ReplInfo
}

// ReplInfo is the replication state an RDB file records.
type ReplInfo struct {
	StreamDB int    // the database the stream selected last
	ID       string // the replication id
	Offset   int64  // master_repl_offset
}

// Write writes ks as an RDB file to w, the whole of it under the caller's
// engine lock (SAVE, DEBUG RELOAD, SHUTDOWN): a Stream (snapshot.go) run to
// its end at once, so that one encoder makes every RDB file.
func Write(w io.Writer, ks *keyspace.Keyspace, info SaveInfo) error {
	return NewStream(ks, info).WriteAll(w)
}

// WriteAll runs s to its end at once, under the caller's engine lock, into w.
func (s *Stream) WriteAll(w io.Writer) error {
	defer s.Close()
	for {
		chunk, done, err := s.Step(1 << 30)
		if err != nil {
			return err
		}
		if _, err := w.Write(chunk); err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// LoadOptions drive Load.
type LoadOptions struct {
	// Now is the load time (Unix ms): keys whose deadline is before it are
	// not loaded (as a master does).
	Now int64
	// Merge lets a loaded key replace an existing one (DEBUG RELOAD MERGE,
	// RDBFLAGS_ALLOW_DUP); without it a duplicate key fails the load.
	Merge bool
	// SkipChecksum ignores the trailing CRC64.
	SkipChecksum bool
	// Function is called with each function library's code, in file order.
	Function func(code string) error
	// KeyDelay, when not nil, runs after each key is loaded (key-load-delay).
	KeyDelay func()
	// Progress, when not nil, is told after each key record how many of the
	// file's total bytes are read; an error it returns stops the load with
	// that error (the server is shutting down).
	Progress func(read, total int) error
	// Resized, when not nil, is told of each database the file's RESIZEDB
	// hint sized ahead of its keys: the key table's buckets and the TTL
	// index's capacity.
	Resized func(db, keyBuckets, expireSlots int)
	// Expired, when not nil, is told of each key not loaded because its
	// deadline had passed (key is the caller's to keep).
	Expired func(db int, key []byte)
}

// LoadStats are the counts of a load.
type LoadStats struct {
	// Repl is the replication state the file recorded, nil when none (or
	// incomplete: Redis's rsi_is_valid)
	Repl              *ReplInfo
	Version           int
	Loaded, Expired   int
	EmptyKeysSkipped  int
	FunctionLibraries int
	// Size is the length of the RDB stream read, up to its checksum: an
	// old-style AOF's commands follow it.
	Size int
}

// inputSize is r's length when r tells it (a file, a byte reader), else -1.
func inputSize(r io.Reader) int {
	switch x := r.(type) {
	case interface{ Len() int }:
		return x.Len()
	case interface{ Stat() (os.FileInfo, error) }:
		if fi, err := x.Stat(); err == nil && fi.Mode().IsRegular() {
			return int(fi.Size())
		}
	}
	return -1
}

// Load reads an RDB file of version 1 to 13 into ks (rdbLoadRio). Keys are
// added to the databases as they come (the caller empties them first if it
// wants only the file's contents); on an error the keyspace holds what was
// loaded before it. The caller holds the engine lock for the whole call.
// r is decoded as it is read, through a window of about 1 MB (format.go's
// reader): Load may read up to a window past the RDB's end, and LoadStats.Size
// tells where that end is.
func Load(r io.Reader, ks *keyspace.Keyspace, o LoadOptions) (LoadStats, error) {
	var st LoadStats
	var aux replAux
	rd := streamReader(r, inputSize(r))
	head, err := rd.bytes(9)
	if rd.err != nil {
		return st, rd.err
	}
	if err != nil || string(head[:5]) != "REDIS" {
		return st, errors.New("wrong signature trying to load DB from file")
	}
	ver, err := strconv.Atoi(string(head[5:9]))
	if err != nil || ver < 1 || ver > MaxVersion {
		return st, fmt.Errorf("can't handle RDB format version %s", head[5:9])
	}
	st.Version = ver
	d := decoder{ks: ks}
	db := ks.DBs[0]
	expireAt := int64(-1)
	lfuFreq, lruIdle := int64(-1), int64(-1) // the next key's FREQ and IDLE opcodes
	for {
		t, err := rd.byte()
		if err != nil {
			return st, errShortRead
		}
		switch t {
		case opExpireTime:
			p, err := rd.bytes(4)
			if err != nil {
				return st, errShortRead
			}
			expireAt = int64(int32(binary.LittleEndian.Uint32(p))) * 1000
			continue
		case opExpireTimeMs:
			if expireAt, err = rd.millis(); err != nil {
				return st, errShortRead
			}
			continue
		case opFreq:
			f, err := rd.byte()
			if err != nil {
				return st, errShortRead
			}
			lfuFreq = int64(f)
			continue
		case opIdle:
			idle, err := rd.length()
			if err != nil {
				return st, errShortRead
			}
			lruIdle = int64(idle)
			continue
		case opSelectDB:
			id, err := rd.length()
			if err != nil {
				return st, errShortRead
			}
			if id >= uint64(len(ks.DBs)) {
				return st, fmt.Errorf("data file was created with a server configured to handle more than %d databases", len(ks.DBs))
			}
			db = ks.DBs[id]
			continue
		case opResizeDB:
			keys, err := rd.length()
			if err != nil {
				return st, errShortRead
			}
			expires, err := rd.length()
			if err != nil {
				return st, errShortRead
			}
			// a hint: sized as Redis sizes it, but never past what the
			// file could hold (a hostile hint must not allocate gigabytes;
			// a payload of unknown size, a replica's, is sized for up to
			// 64K keys ahead, and grows as its keys come beyond)
			limit := uint64(rd.left() / 3) // a key takes 3 bytes at least
			if rd.src != nil && rd.size < 0 {
				limit = min(limit, 1<<16)
			}
			kb, eb := db.Expand(int(min(keys, limit)), int(min(expires, limit)))
			if o.Resized != nil {
				o.Resized(db.ID, kb, eb)
			}
			continue
		case opSlotInfo:
			for range 3 {
				if _, err := rd.length(); err != nil {
					return st, errShortRead
				}
			}
			continue
		case opAux:
			k, err := rd.str()
			if err != nil {
				return st, errShortRead
			}
			v, err := rd.str()
			if err != nil {
				return st, errShortRead
			}
			aux.note(string(k), string(v))
			st.Repl = aux.repl()
			continue
		case opModuleAux:
			return st, errors.New("the RDB file contains AUX module data I can't load")
		case opFunctionPreGA:
			return st, errors.New("pre-release function format not supported")
		case opFunction2:
			code, err := rd.str()
			if err != nil {
				return st, errShortRead
			}
			st.FunctionLibraries++
			if o.Function != nil {
				if err := o.Function(string(code)); err != nil {
					return st, fmt.Errorf("failed loading library, %w", err)
				}
			}
			continue
		case opEOF:
			if ver >= 5 {
				crc := rd.checksum()
				p, err := rd.bytes(8)
				if err != nil {
					return st, errShortRead
				}
				sum := binary.LittleEndian.Uint64(p)
				if sum != 0 && !o.SkipChecksum && sum != crc {
					return st, errors.New("RDB CRC error")
				}
			}
			st.Size = rd.pos()
			return st, nil
		}
		if !isObjectType(t) {
			return st, fmt.Errorf("unknown RDB type %d", t)
		}
		key, err := rd.str()
		if err != nil {
			return st, errShortRead
		}
		key = append([]byte(nil), key...)
		v, err := d.value(rd, t)
		switch {
		case IsEmptyKey(err):
			st.EmptyKeysSkipped++
		case err != nil:
			return st, fmt.Errorf("key %q: %w", key, err)
		case expireAt != -1 && expireAt < o.Now:
			st.Expired++
			if o.Expired != nil {
				o.Expired(db.ID, key)
			}
		default:
			if !o.Merge && db.Peek(key) != nil {
				return st, fmt.Errorf("RDB has duplicated key '%s' in DB %d", key, db.ID)
			}
			e := v.Entry()
			e.SetAccess(ks.NewAccess()) // createObject's, then objectSetLRUOrLFU
			at := int64(0)
			if expireAt != -1 {
				at = expireAt
			}
			ins := db.Insert(key, e, at)
			if o.KeyDelay != nil {
				o.KeyDelay()
			}
			switch lfu := ks.AccessPolicy() == keyspace.AccessLFU; {
			case lfu && lfuFreq >= 0:
				ks.SetFreq(ins, lfuFreq)
			case !lfu && lruIdle >= 0:
				ks.SetIdle(ins, lruIdle)
			}
			st.Loaded++
		}
		expireAt, lfuFreq, lruIdle = -1, -1, -1
		if o.Progress != nil {
			if err := o.Progress(rd.pos(), max(rd.size, 0)); err != nil {
				return st, err
			}
		}
	}
}

var errShortRead = errors.New("unexpected EOF reading RDB file")

// replAux gathers the replication AUX fields of a file being loaded.
type replAux struct {
	db, off      int64
	id           string
	hasDB, hasOf bool
}

func (a *replAux) note(k, v string) {
	switch k {
	case "repl-stream-db":
		a.db, _ = strconv.ParseInt(v, 10, 64)
		a.hasDB = true
	case "repl-id":
		if len(v) == 40 {
			a.id = v
		}
	case "repl-offset":
		a.off, _ = strconv.ParseInt(v, 10, 64)
		a.hasOf = true
	}
}

// repl is the state when the file gave all of it (a valid id, an offset, a
// database other than -1).
func (a *replAux) repl() *ReplInfo {
	if a.id == "" || !a.hasOf || a.off == -1 || !a.hasDB || a.db == -1 {
		return nil
	}
	return &ReplInfo{StreamDB: int(a.db), ID: a.id, Offset: a.off}
}
