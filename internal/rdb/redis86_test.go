package rdb

import (
	"bytes"
	"encoding/binary"
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
	if len(ps) != 8 {
		t.Fatalf("%d payloads, want 8", len(ps))
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

// A stream whose IDMP state holds producers' records is refused: HotKV has
// no IDMP, and restoring it would lose its duplicate detection.
func TestStreamIDMPRecordsRefused(t *testing.T) {
	p := redis86Payloads(t)["stream"]
	body := p[:len(p)-10]
	// the IDMP part ends the value: duration, size, 0 producers, 2 counts
	// (one byte each here); replace "0 producers" with one producer "p"
	// holding one record "i" -> 1-1
	if !bytes.HasSuffix(body, []byte{0, 0, 0}) {
		t.Fatalf("the stream payload does not end with empty IDMP state: %x", body[len(body)-8:])
	}
	b := append([]byte(nil), body[:len(body)-3]...)
	b = append(b, 1, 1, 'p', 1, 1, 'i', 1, 1, 0, 0)
	b = binary.LittleEndian.AppendUint16(b, 13)
	b = binary.LittleEndian.AppendUint64(b, crc64.Update(0, b))
	if _, err := DecodePayload(b, keyspace.New(1, 1)); err == nil {
		t.Fatal("a stream with IDMP records was restored without them")
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
