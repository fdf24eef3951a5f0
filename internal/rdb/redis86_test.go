package rdb

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"testing"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/rdb/crc64"
)

// testdata/redis86-dump.txt: DUMP payloads from redis-server 8.6.3 (RDB
// version 13: name, encoding, hex payload); testdata/redis86.rdb: its SAVE of
// the same keys. Redis 8.6 writes every stream as RDB_TYPE_STREAM_LISTPACKS_4
// (with its IDMP state).
func redis86Payloads(t *testing.T) map[string][]byte {
	return payloadFile(t, "testdata/redis86-dump.txt")
}

// Redis 8.6's payloads (version 13) restore; they were refused as too new.
func TestRedis86Payloads(t *testing.T) {
	ks := keyspace.New(1, 1)
	want := map[string]string{
		"str_small": "string/embstr:hello", "str_int": "string/int:12345",
		"list_lp": `list/listpack:"a","b","1",`,
		"set_lp":  `set/listpack:["1" "a" "b"]`,
		"zset_lp": `zset/listpack:"a"=1,"b"=2.5,`,
		"hash_lp": `hash/listpack:["f1"="v1"@0 "f2"="2"@0]`,
	}
	ps := redis86Payloads(t)
	if len(ps) != 9 {
		t.Fatalf("%d payloads, want 9", len(ps))
	}
	for name, p := range ps {
		if binary.LittleEndian.Uint16(p[len(p)-10:]) != 13 {
			t.Fatalf("%s: not an RDB 13 payload", name)
		}
		if err := VerifyPayload(p, false); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		v, err := DecodePayload(p, ks)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if w, ok := want[name]; ok {
			if got := describe(entryOf(v)); got != w {
				t.Errorf("%s:\n got %s\nwant %s", name, got, w)
			}
		}
		if name == "stream" {
			s := v.Obj.(*keyspace.Stream)
			if s.Len() != 2 || len(s.Groups()) != 1 {
				t.Errorf("stream: %d entries, %d groups; want 2 and 1", s.Len(), len(s.Groups()))
			}
		}
	}
	if err := VerifyPayload(withVersion(ps["str_small"], MaxVersion+1), false); err == nil {
		t.Error("a payload newer than RDB 13 verified")
	}
}

// A stream with IDMP records from Redis 8.6.3 (XCFGSET sx IDMP-DURATION
// 86400 IDMP-MAXSIZE 3; four XADD IDMP p1 i1..i4 and a repeat of i4; XADD
// IDMP p0 <long iid>; XADD IDMPAUTO p2 c d; a group): HotKV keeps every
// record, setting and counter, and dumps it again byte for byte.
func TestRedis86StreamIDMP(t *testing.T) {
	p := redis86Payloads(t)["stream_idmp"]
	v, err := DecodePayload(p, keyspace.New(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	s := v.Obj.(*keyspace.Stream)
	if s.IdmpDuration != 86400 || s.IdmpMaxSize != 3 || s.IidsAdded != 6 || s.IidsDuplicates != 1 ||
		s.IdmpProducers() != 3 || s.IdmpTracked() != 5 {
		t.Fatalf("duration %d size %d added %d dups %d producers %d tracked %d; want 86400 3 6 1 3 5",
			s.IdmpDuration, s.IdmpMaxSize, s.IidsAdded, s.IidsDuplicates, s.IdmpProducers(), s.IdmpTracked())
	}
	if _, ok := s.IdmpLookup([]byte("p1"), []byte("i1")); ok {
		t.Error("p1's i1 was evicted by MAXSIZE 3 but is recorded")
	}
	if id, ok := s.IdmpLookup([]byte("p1"), []byte("i4")); !ok || id != (keyspace.StreamID{Ms: 1796206058308}) {
		t.Errorf("p1 i4 -> %v %v", id, ok)
	}
	auto, _ := hex.DecodeString("b7e71ee96cd14e5b7ba7130358c9a61f")
	if _, ok := s.IdmpLookup([]byte("p2"), auto); !ok {
		t.Error("the IDMPAUTO record of p2 is missing")
	}
	if d := Dump(entryOf(v), true); !bytes.Equal(d, p) {
		t.Errorf("DUMP differs from Redis 8.6.3's\n got %x\nwant %x", d, p)
	}
	// a producer named twice is corrupt
	i := bytes.Index(p, []byte("\x02p1\x03"))
	if i < 0 {
		t.Fatal("producer p1 not found in the payload")
	}
	b := append([]byte(nil), p[:len(p)-10]...)
	copy(b[i:], "\x02p0") // p0 twice
	b = binary.LittleEndian.AppendUint16(b, 13)
	b = binary.LittleEndian.AppendUint64(b, crc64.Update(0, b))
	if _, err := DecodePayload(b, keyspace.New(1, 1)); err == nil {
		t.Error("a stream naming producer p0 twice restored")
	}
}

// Redis 8.6's RDB file (REDIS0013) loads.
func TestRedis86File(t *testing.T) {
	data, err := os.ReadFile("testdata/redis86.rdb")
	if err != nil {
		t.Fatal(err)
	}
	ks := keyspace.New(16, 1)
	st, err := Load(bytes.NewReader(data), ks, LoadOptions{Now: 1700000000000})
	if err != nil {
		t.Fatal(err)
	}
	if st.Version != 13 || ks.DBs[0].Len() != 8 {
		t.Fatalf("version %d, %d keys; want 13 and 8", st.Version, ks.DBs[0].Len())
	}
}
