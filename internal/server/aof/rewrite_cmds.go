package aof

import (
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/rdb"
	"github.com/hotkv/hotkv/internal/resp"
)

// itemsPerCmd is AOF_REWRITE_ITEMS_PER_CMD: a big collection is rebuilt 64
// elements per command.
const itemsPerCmd = 64

// commandStream starts the dataset as commands: the base file of
// aof-use-rdb-preamble no (rewriteAppendOnlyFileRio), as a snapshot stream
// (rdb.Stream: keys changed meanwhile are written as they were at the
// start). The function libraries come first (FUNCTION LOAD), then per key a
// SELECT when its database is not the last key's and the commands that
// rebuild it: SET; RPUSH, SADD, ZADD, HMSET in batches of 64; HPEXPIREAT
// per field with a TTL; PEXPIREAT for the key's TTL. A stream is rebuilt
// with RESTORE of its DUMP payload (entries, consumer groups, pending
// entries, consumers, IDMP state in one command; Redis writes XADD, XSETID,
// XGROUP and XCLAIM commands instead: decision 0043). ts is a timestamp
// annotation to start with ("" for none). Engine lock.
func commandStream(ks *keyspace.Keyspace, functions []string, ts string) *rdb.Stream {
	var head []byte
	if ts != "" {
		head = append(head, ts...)
	}
	for _, code := range functions {
		head = resp.AppendCommand(head, []byte("FUNCTION"), []byte("LOAD"), []byte(code))
	}
	enc := &cmdEncoder{cur: -1, args: make([][]byte, 0, 2+2*itemsPerCmd)}
	return rdb.NewCommandStream(ks, head, enc.key)
}

// cmdEncoder is commandStream's rdb.KeyEncoder.
type cmdEncoder struct {
	cur  int // the database of the last SELECT
	args [][]byte
}

func (c *cmdEncoder) key(b []byte, db int, key string, e *keyspace.Entry, at int64) []byte {
	if db != c.cur {
		b = resp.AppendCommand(b, []byte("SELECT"), []byte(strconv.Itoa(db)))
		c.cur = db
	}
	k := []byte(key)
	batch := func(verb string, add func(emit func(items ...[]byte))) {
		c.args = append(c.args[:0], []byte(verb), k)
		n := 0
		add(func(items ...[]byte) {
			for _, it := range items {
				// an intset's members are formatted into one
				// buffer: copy each
				c.args = append(c.args, append([]byte(nil), it...))
			}
			n++
			if n == itemsPerCmd {
				b = resp.AppendCommand(b, c.args...)
				c.args, n = c.args[:2], 0
			}
		})
		if n > 0 {
			b = resp.AppendCommand(b, c.args...)
		}
	}
	switch e.Kind {
	case keyspace.KindString:
		b = resp.AppendCommand(b, []byte("SET"), k, e.Bytes())
	case keyspace.KindList:
		batch("RPUSH", func(emit func(...[]byte)) {
			e.Obj().(*keyspace.List).ForEachNode(func(elems [][]byte, _ bool) {
				for _, el := range elems {
					emit(el)
				}
			})
		})
	case keyspace.KindSet:
		batch("SADD", func(emit func(...[]byte)) {
			e.Obj().(*keyspace.Set).Range(func(m []byte) bool {
				emit(m)
				return true
			})
		})
	case keyspace.KindZSet:
		batch("ZADD", func(emit func(...[]byte)) {
			e.Obj().(*keyspace.ZSet).Range(func(m []byte, score float64) {
				emit(resp.AppendFpconv(nil, score), m)
			})
		})
	case keyspace.KindHash:
		h := e.Obj().(*keyspace.Hash)
		type fieldTTL struct {
			f  []byte
			at int64
		}
		var ttls []fieldTTL
		batch("HMSET", func(emit func(...[]byte)) {
			h.Range(func(f, v []byte, exp int64) bool {
				emit(f, v)
				if exp > 0 {
					ttls = append(ttls, fieldTTL{append([]byte(nil), f...), exp})
				}
				return true
			})
		})
		for _, ft := range ttls {
			b = resp.AppendCommand(b, []byte("HPEXPIREAT"), k, []byte(strconv.FormatInt(ft.at, 10)),
				[]byte("FIELDS"), []byte("1"), ft.f)
		}
	case keyspace.KindStream:
		b = resp.AppendCommand(b, []byte("RESTORE"), k, []byte("0"), rdb.Dump(e, false))
	}
	if at != 0 {
		b = resp.AppendCommand(b, []byte("PEXPIREAT"), k, []byte(strconv.FormatInt(at, 10)))
	}
	return b
}
