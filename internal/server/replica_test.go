package server_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// A HotKV replica of a HotKV master: the snapshot, then the stream (MULTI,
// a script, a TTL), equal DEBUG DIGEST; on the replica's own clock (fake,
// moved past the TTL) the key reads as missing but stays until the master
// expires it; REPLICAOF NO ONE makes it a master that keeps its data.
func TestHotKVReplicaOfHotKV(t *testing.T) {
	ctx := context.Background()
	m := hotkvtest.Start(t)
	r := hotkvtest.Start(t, hotkvtest.WithFakeClock(time.Now().UnixMilli()))
	mc := redis.NewClient(&redis.Options{Addr: m.Addr})
	defer mc.Close()
	rc := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer rc.Close()
	for i := range 300 {
		k := strconv.Itoa(i)
		mc.Set(ctx, "s:"+k, k, 0)
		mc.HSet(ctx, "h:"+strconv.Itoa(i%7), k, i)
		mc.ZAdd(ctx, "z", redis.Z{Score: float64(i), Member: k})
	}
	host, port, _ := net.SplitHostPort(m.Addr)
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitClientLinkUp(t, rc, "no sync")
	deadline := time.Now().Add(20 * time.Second)
	mc.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, "n")
		p.LPush(ctx, "l", "a", "b")
		return nil
	})
	mc.Eval(ctx, "redis.call('set', KEYS[1], 'x'); return redis.call('del', KEYS[2])", []string{"lua", "s:1"})
	mc.Set(ctx, "soon", "v", time.Hour)
	waitSameDigest(t, mc, rc, deadline)
	if rc.Get(ctx, "lua").Val() != "x" || rc.Exists(ctx, "s:1").Val() != 0 || rc.Get(ctx, "n").Val() != "1" {
		t.Error("the stream's effects are not on the replica")
	}
	keys := rc.DBSize(ctx).Val()
	r.Clock.Advance(2 * time.Hour) // past "soon"'s deadline on the replica's clock only
	if v, err := rc.Get(ctx, "soon").Result(); err != redis.Nil {
		t.Errorf("an expired key read on the replica: %q %v", v, err)
	}
	time.Sleep(300 * time.Millisecond) // the replica's cron runs meanwhile
	if n := rc.DBSize(ctx).Val(); n != keys {
		t.Errorf("the replica expired keys itself: %d keys, had %d", n, keys)
	}
	mc.Del(ctx, "soon") // the master's word
	for rc.DBSize(ctx).Val() != keys-1 {
		if time.Now().After(deadline) {
			t.Fatalf("the master's DEL did not arrive: %d keys", rc.DBSize(ctx).Val())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := rc.Set(ctx, "w", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "READONLY") {
		t.Errorf("a write on the replica: %v", err)
	}
	// CLIENT KILL TYPE master on the replica drops its link, which comes
	// back with a partial resync
	if n := rc.ClientKillByFilter(ctx, "TYPE", "master").Val(); n != 1 {
		t.Fatalf("CLIENT KILL TYPE master killed %d", n)
	}
	for !strings.Contains(mc.Info(ctx, "stats").Val(), "sync_partial_ok:1\r\n") || !strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up") {
		if time.Now().After(deadline) {
			t.Fatalf("no partial resync after CLIENT KILL TYPE master: %s", mc.Info(ctx, "stats").Val())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// a command of the stream that fails on the replica is counted (and
	// logged as critical), and the stream goes on
	if err := mc.Do(ctx, "DEBUG", "REPLICATE", "fake-command-1").Err(); err != nil {
		t.Fatal(err)
	}
	mc.Set(ctx, "after-fake", "1", 0)
	for rc.Get(ctx, "after-fake").Val() != "1" || !strings.Contains(rc.Info(ctx, "stats").Val(), "unexpected_error_replies:1\r\n") {
		if time.Now().After(deadline) {
			t.Fatalf("after DEBUG REPLICATE: %s", rc.Info(ctx, "stats").Val())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// DEBUG CHANGE-REPL-ID draws a new id
	before := rc.Info(ctx, "replication").Val()
	mc.Do(ctx, "DEBUG", "CHANGE-REPL-ID")
	if a, b := mc.Info(ctx, "replication").Val(), before; strings.Contains(a, "master_replid:"+between(b, "master_replid:", "\r\n")+"\r\n") {
		t.Error("DEBUG CHANGE-REPL-ID kept the id")
	}
	// a writable replica expires the keys its own clients wrote (the
	// master does not know them)
	rc.ConfigSet(ctx, "replica-read-only", "no")
	if err := rc.Set(ctx, "own", "1", time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	n := rc.DBSize(ctx).Val()
	r.Clock.Advance(2 * time.Second)
	for rc.DBSize(ctx).Val() != n-1 {
		if time.Now().After(deadline) {
			t.Fatal("the writable replica's own key did not expire")
		}
		time.Sleep(10 * time.Millisecond)
	}
	rc.ConfigSet(ctx, "replica-read-only", "yes")
	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if rc.Get(ctx, "lua").Val() != "x" {
		t.Error("the data went with REPLICAOF NO ONE")
	}
	if err := rc.Set(ctx, "w", "1", 0).Err(); err != nil {
		t.Errorf("a write after NO ONE: %v", err)
	}
}

// between is the text of s between the first a and the b after it.
func between(s, a, b string) string {
	_, rest, _ := strings.Cut(s, a)
	v, _, _ := strings.Cut(rest, b)
	return v
}
