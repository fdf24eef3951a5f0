package rdb

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/keyspace"
)

// streamSamples builds streams of every shape: empty (a group made it), one
// node, many nodes with tombstones and field-changing entries, groups with
// pending entries, consumers without any, NOACK-style groups.
func streamSamples() map[string]*keyspace.Stream {
	out := map[string]*keyspace.Stream{}
	lim := keyspace.StreamLimits{MaxBytes: 4096, MaxEntries: 5}
	empty := keyspace.NewStream(keyspace.DefaultStreamLimits)
	empty.CreateCG([]byte("g"), keyspace.StreamID{}, -1)
	out["empty"] = empty

	one := keyspace.NewStream(keyspace.DefaultStreamLimits)
	one.Append(keyspace.StreamID{Ms: 1, Seq: 1}, [][]byte{[]byte("f"), []byte("v")}, lim)
	out["one"] = one

	big := keyspace.NewStream(keyspace.DefaultStreamLimits)
	for i := 0; i < 57; i++ {
		fv := [][]byte{[]byte("name"), []byte("v" + strconv.Itoa(i)), []byte("n"), []byte(strconv.Itoa(i * 1000003))}
		if i%7 == 3 {
			fv = [][]byte{[]byte("other"), []byte(strings.Repeat("x", i*10))}
		}
		big.Append(keyspace.StreamID{Ms: 1000 + uint64(i/3), Seq: uint64(i)}, fv, lim)
	}
	big.Delete([]keyspace.StreamID{{Ms: 1000, Seq: 1}, {Ms: 1005, Seq: 16}, {Ms: 1005, Seq: 17}})
	big.Trim(&keyspace.TrimArgs{Strategy: keyspace.TrimMaxLen, MaxLen: 50})
	g1 := big.CreateCG([]byte("g1"), keyspace.StreamID{Ms: 1010, Seq: 30}, 28)
	alice := g1.CreateConsumer([]byte("alice"), 1700000000000)
	alice.ActiveTime = 1700000000500
	g1.CreateConsumer([]byte("idle"), 1700000000001)
	for _, id := range []keyspace.StreamID{{Ms: 1003, Seq: 10}, {Ms: 1004, Seq: 12}, {Ms: 1009, Seq: 27}} {
		n := &keyspace.StreamNACK{ID: id, DeliveryTime: 1700000000100, DeliveryCount: 3, Consumer: alice}
		g1.PEL.Insert(n)
		alice.PEL.Insert(n)
	}
	big.CreateCG([]byte("g0"), keyspace.MaxStreamID, -1)
	// IDMP: settings, three producers (one past its size), counters
	big.IdmpConfigure(3600, 2)
	for i, r := range [][2]string{{"p1", "a"}, {"p1", "b"}, {"p1", "c"}, {"p0", strings.Repeat("long", 20)}, {"p\x00bin", "\xff"}} {
		big.IdmpRecord([]byte(r[0]), []byte(r[1]), keyspace.StreamID{Ms: 1010, Seq: uint64(i)})
	}
	big.IidsDuplicates = 7
	out["big"] = big
	return out
}

// Streams survive DUMP and RESTORE: entries, IDs, counters, groups, PELs,
// consumers and their times; the payload dumps again byte for byte (the nodes
// are Redis's listpacks as they are).
func TestStreamPayloadRoundTrip(t *testing.T) {
	ks := keyspace.New(1, 7)
	for name, s := range streamSamples() {
		e := objEntry(s)
		for _, compress := range []bool{true, false} {
			p := Dump(e, compress)
			if p[0] != TypeStreamListpacks4 {
				t.Fatalf("%s: type %d", name, p[0])
			}
			v, err := DecodePayload(p, ks)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got, want := describeStream(v.Obj.(*keyspace.Stream)), describeStream(s); got != want {
				t.Errorf("%s: round trip\n got %s\nwant %s", name, got, want)
			}
			if p2 := Dump(entryOf(v), compress); !bytes.Equal(p, p2) {
				t.Errorf("%s: payload changed after a round trip", name)
			}
		}
	}
}

func describeStream(s *keyspace.Stream) string {
	var b strings.Builder
	b.WriteString("len=" + strconv.FormatUint(s.Len(), 10) + " last=" + s.LastID.String() + " first=" + s.FirstID.String() +
		" maxdel=" + s.MaxDeletedID.String() + " added=" + strconv.FormatUint(s.EntriesAdded, 10) + " nodes=" + strconv.Itoa(s.NodeCount()) + " [")
	var sc []byte
	s.Range(keyspace.StreamID{}, keyspace.MaxStreamID, false, func(e *keyspace.StreamEntry) bool {
		b.WriteString(e.ID.String() + "{")
		sc = e.Fields(sc, func(f, v []byte) { b.WriteString(string(f) + "=" + string(v) + " ") })
		b.WriteString("}")
		return true
	})
	b.WriteString("]")
	b.WriteString(" idmp=" + strconv.FormatUint(s.IdmpDuration, 10) + "/" + strconv.FormatUint(s.IdmpMaxSize, 10) +
		" added=" + strconv.FormatUint(s.IidsAdded, 10) + " dups=" + strconv.FormatUint(s.IidsDuplicates, 10))
	s.EachIdmpProducer(func(pid string, n int, records func(func(string, keyspace.StreamID))) {
		b.WriteString(" producer " + strconv.Quote(pid) + ":")
		records(func(iid string, id keyspace.StreamID) { b.WriteString(strconv.Quote(iid) + "=" + id.String() + ",") })
	})
	for _, g := range s.Groups() {
		b.WriteString(" group " + g.Name + " last=" + g.LastID.String() + " read=" + strconv.FormatInt(g.EntriesRead, 10) + " pel=")
		g.PEL.Ascend(keyspace.StreamID{}, func(n *keyspace.StreamNACK) bool {
			b.WriteString(n.ID.String() + "/" + n.Consumer.Name + "/" + strconv.FormatInt(n.DeliveryTime, 10) + "/" + strconv.FormatInt(n.DeliveryCount, 10) + ",")
			return true
		})
		for _, c := range g.Consumers() {
			b.WriteString(" consumer " + c.Name + " seen=" + strconv.FormatInt(c.SeenTime, 10) + " active=" + strconv.FormatInt(c.ActiveTime, 10) +
				" pel=" + strconv.Itoa(c.PEL.Len()))
		}
	}
	return b.String()
}

// A payload redis-server 7.0.15 DUMPed (RDB_TYPE_STREAM_LISTPACKS_2, RDB 10)
// after XADD x 1-1 a b loads, and HotKV dumps it back byte for byte but for
// the type (LISTPACKS_4, whose consumers also carry an active time: there are
// none here), the IDMP state Redis 8.6 appends (the default settings, no
// record) and the RDB version. Payloads with groups from 7.0 are loaded
// by stream-cgroups.tcl ("Loading from legacy ... persistence").
func TestRedis70StreamPayload(t *testing.T) {
	ks := keyspace.New(1, 7)
	// the 7.0 payload of dump.golden: XADD x 1-1 a b
	p := []byte("\x13\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x1d\x1d\x00\x00\x00\x0a\x00\x01\x01\x00\x01\x01\x01\x81a\x02\x00\x01\x02\x01\x00\x01\x00\x01\x81b\x02\x04\x01\xff\x01\x01\x01\x01\x01\x00\x00\x01\x00\x0a\x00oC4\xec\xd7\xfaZ\xec")
	if err := VerifyPayload(p, false); err != nil {
		t.Fatal(err)
	}
	v, err := DecodePayload(p, ks)
	if err != nil {
		t.Fatal(err)
	}
	s := v.Obj.(*keyspace.Stream)
	if got := describeStream(s); got != "len=1 last=1-1 first=1-1 maxdel=0-0 added=1 nodes=1 [1-1{a=b }] idmp=100/100 added=0 dups=0" {
		t.Fatal(got)
	}
	// 8.6 writes type 26, the same body (no groups: nothing else differs),
	// then duration 100, size 100, no producer, 0 added, 0 duplicates
	d := Dump(entryOf(v), true)
	q := append([]byte(nil), p[:len(p)-10]...)
	q[0] = TypeStreamListpacks4
	q = append(q, 0x40, 100, 0x40, 100, 0, 0, 0)
	q = append(q, p[len(p)-10:]...)
	want := withVersion(q, Version)
	if !bytes.Equal(d, want) {
		t.Errorf("DUMP\n got %x\nwant %x", d, want)
	}
}

// Corrupt stream payloads are errors, never panics, and a stream that loads
// can be read whole.
func TestCorruptStreamPayloads(t *testing.T) {
	ks := keyspace.New(1, 7)
	for name, s := range streamSamples() {
		p := Dump(objEntry(s), false)
		try := func(q []byte) {
			v, err := DecodePayload(q, ks)
			if err != nil {
				return
			}
			st := v.Obj.(*keyspace.Stream)
			_ = describeStream(st)
			st.Range(keyspace.StreamID{}, keyspace.MaxStreamID, true, func(*keyspace.StreamEntry) bool { return true })
			_ = st.RaxNodes()
		}
		for n := 0; n < len(p)-10; n++ {
			try(append(append([]byte(nil), p[:n]...), p[len(p)-10:]...))
		}
		for i := 0; i < len(p)-10; i++ {
			for _, x := range []byte{0xff, 0x80, 0x01, 0x7f} {
				q := append([]byte(nil), p...)
				q[i] ^= x
				try(q)
			}
		}
		_ = name
	}
}
