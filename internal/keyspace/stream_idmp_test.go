package keyspace

import (
	"strconv"
	"strings"
	"testing"
)

func idmpStream(dur, size uint64) *Stream {
	return NewStream(StreamLimits{MaxBytes: 4096, MaxEntries: 100, IdmpDuration: dur, IdmpMaxSize: size})
}

func lookup(s *Stream, pid, iid string) (StreamID, bool) {
	return s.IdmpLookup([]byte(pid), []byte(iid))
}

// Records: per producer, the oldest goes past IdmpMaxSize; counters are for
// the stream's lifetime; IdmpConfigure forgets everything only on a change.
func TestIdmpRecordsAndEviction(t *testing.T) {
	s := idmpStream(100, 3)
	for i := 1; i <= 5; i++ {
		s.IdmpRecord([]byte("p"), []byte("i"+strconv.Itoa(i)), StreamID{Ms: uint64(i)})
	}
	s.IdmpRecord([]byte("q"), []byte("i1"), StreamID{Ms: 9})
	for i, want := range []bool{false, false, true, true, true} {
		if _, ok := lookup(s, "p", "i"+strconv.Itoa(i+1)); ok != want {
			t.Errorf("p i%d recorded %v, want %v", i+1, ok, want)
		}
	}
	if id, ok := lookup(s, "q", "i1"); !ok || id.Ms != 9 {
		t.Error("producers share records")
	}
	if s.IdmpProducers() != 2 || s.IdmpTracked() != 4 || s.IidsAdded != 6 {
		t.Fatalf("producers %d tracked %d added %d", s.IdmpProducers(), s.IdmpTracked(), s.IidsAdded)
	}
	if s.IdmpConfigure(100, 3) || s.IdmpTracked() != 4 {
		t.Fatal("the same settings changed something")
	}
	if !s.IdmpConfigure(0, 2) || s.IdmpTracked() != 0 || s.IdmpProducers() != 0 || s.IdmpMaxSize != 2 || s.IdmpDuration != 100 || s.IidsAdded != 6 {
		t.Fatal("a new size must forget the records and keep the rest")
	}
	// many evictions: the insertion order stays right past compaction
	for i := 0; i < 1000; i++ {
		s.IdmpRecord([]byte("p"), []byte(strconv.Itoa(i)), StreamID{Ms: uint64(i)})
	}
	var got []string
	s.EachIdmpProducer(func(pid string, n int, records func(func(string, StreamID))) {
		records(func(iid string, id StreamID) { got = append(got, pid+"/"+iid+"="+id.String()) })
	})
	if len(got) != 2 || got[0] != "p/998=998-0" || got[1] != "p/999=999-0" {
		t.Fatalf("records %v", got)
	}
}

// Expiry drops, per producer, the records at the front of the insertion
// order whose entry time is IdmpDuration old, and the producers left empty;
// a recent record keeps older ones behind it (Redis expires from the front).
func TestIdmpExpire(t *testing.T) {
	s := idmpStream(10, 100) // 10 s
	s.IdmpRecord([]byte("p"), []byte("a"), StreamID{Ms: 1000})
	s.IdmpRecord([]byte("p"), []byte("b"), StreamID{Ms: 5000})
	s.IdmpRecord([]byte("q"), []byte("new"), StreamID{Ms: 20000})
	s.IdmpRecord([]byte("q"), []byte("old"), StreamID{Ms: 1})
	if !s.IdmpExpire(11000) {
		t.Fatal("records are left")
	}
	if _, ok := lookup(s, "p", "a"); ok {
		t.Error("a (1000 ms, 10 s old at 11000) kept")
	}
	if _, ok := lookup(s, "p", "b"); !ok {
		t.Error("b expired early")
	}
	if _, ok := lookup(s, "q", "old"); !ok {
		t.Error("a record behind a recent one expired (Redis keeps it)")
	}
	if s.IdmpExpire(30000) {
		t.Fatal("everything is due at 30000")
	}
	if s.IdmpProducers() != 0 || s.IdmpTracked() != 0 || s.IidsAdded != 4 {
		t.Fatal("producers must go with their records; counters stay")
	}
}

// The DB's registry follows the stream through RENAME, MOVE, COPY, SWAPDB,
// overwrite, DEL and FLUSHDB, and the sweeper expires what is due.
func TestIdmpRegistryFollowsKeys(t *testing.T) {
	ks := New(2, 1)
	db, db1 := ks.DBs[0], ks.DBs[1]
	ks.SetNow(100_000)
	add := func(db *DB, key string, ms uint64) *Stream {
		s := idmpStream(10, 100)
		s.Append(StreamID{Ms: ms}, [][]byte{[]byte("f"), []byte("v")}, DefaultStreamLimits)
		db.SetObject([]byte(key), KindStream, s)
		s.IdmpRecord([]byte("p"), []byte("i"), StreamID{Ms: ms})
		db.IdmpChanged(s)
		return s
	}
	s := add(db, "s", 95_000)
	db.Rename([]byte("s"), []byte("s2"))
	if db.IdmpStreams() != 1 {
		t.Fatal("rename")
	}
	v := *db.Lookup([]byte("s2"))
	db.Delete([]byte("s2")) // MOVE
	db1.Insert([]byte("s2"), v, 0)
	if db.IdmpStreams() != 0 || db1.IdmpStreams() != 1 {
		t.Fatal("move")
	}
	c := *db1.Lookup([]byte("s2")) // COPY
	c.SetObj(c.Obj().(*Stream).Clone())
	db1.Insert([]byte("copy"), c, 0)
	if db1.IdmpStreams() != 2 {
		t.Fatal("copy")
	}
	ks.Swap(0, 1)
	if db.IdmpStreams() != 2 || db1.IdmpStreams() != 0 {
		t.Fatal("swapdb")
	}
	// not due yet; then due: records go, the streams leave the registry
	db.ActiveExpireIdmp()
	if db.IdmpStreams() != 2 || s.IdmpTracked() != 1 {
		t.Fatal("expired early")
	}
	ks.SetNow(105_000)
	db.ActiveExpireIdmp()
	if db.IdmpStreams() != 0 || s.IdmpTracked() != 0 || s.IdmpProducers() != 0 {
		t.Fatalf("due at 105000: %d streams, %d records", db.IdmpStreams(), s.IdmpTracked())
	}
	if db.Lookup([]byte("s2")) == nil {
		t.Fatal("expiring records must not touch the key")
	}
	add(db, "a", 104_000)
	add(db, "b", 104_000)
	add(db, "c", 104_000)
	db.SetString([]byte("a"), []byte("x"), false) // overwrite
	db.Delete([]byte("b"))
	if db.IdmpStreams() != 1 {
		t.Fatal("overwrite, delete")
	}
	db.Flush()
	if db.IdmpStreams() != 0 {
		t.Fatal("flush")
	}
}

// TimeOrder is Redis 8.6's pel_time list: oldest delivery first; among equal
// times the later Deliver last, entries that were never delivered here
// (loaded, copied) first and by ID.
func TestPELTimeOrder(t *testing.T) {
	cg := &StreamCG{}
	add := func(seq uint64) *StreamNACK {
		n := &StreamNACK{ID: StreamID{Ms: 1, Seq: seq}}
		cg.PEL.Insert(n)
		return n
	}
	loadedB, loadedA := add(9), add(8) // loaded: time 50, no Deliver
	loadedA.DeliveryTime, loadedB.DeliveryTime = 50, 50
	a, b, c := add(1), add(2), add(3)
	cg.Deliver(c, 50)
	cg.Deliver(a, 50)
	cg.Deliver(b, 10)
	cg.Deliver(c, 70) // XCLAIM TIME / a new delivery moves it
	var got []string
	for _, n := range cg.TimeOrder() {
		got = append(got, n.ID.String())
	}
	if want := "1-2 1-8 1-9 1-1 1-3"; strings.Join(got, " ") != want {
		t.Fatalf("time order %v, want %s", got, want)
	}
}
