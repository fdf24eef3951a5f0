package server_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// Snapshots without stopping the world (keyspace.Snapshot, rdb.Stream):
// BGSAVE and BGREWRITEAOF run while clients write every type, and the
// files hold exactly the dataset of the moment they started (BGSAVE) or,
// with the incremental file, of the moment the writes stopped (the AOF).

// snapFill makes n keys of every type in databases 0 and 1.
func snapFill(t *testing.T, c *hotkvtest.Conn, n int) {
	t.Helper()
	for db := range 2 {
		do(t, c, "+OK\r\n", "SELECT", strconv.Itoa(db))
		for i := range n {
			k := strconv.Itoa(i)
			var cmd []string
			switch i % 7 {
			case 0:
				cmd = []string{"SET", "s:" + k, "v" + k}
			case 1:
				cmd = []string{"RPUSH", "l:" + k, "a", "b", k}
			case 2:
				cmd = []string{"HSET", "h:" + k, "f", k, "g", "x"}
			case 3:
				cmd = []string{"SADD", "t:" + k, "1", "2", k}
			case 4:
				cmd = []string{"ZADD", "z:" + k, "1", "a", k, "b"}
			case 5:
				cmd = []string{"XADD", "x:" + k, "*", "f", k}
			case 6:
				cmd = []string{"SET", "e:" + k, k, "EX", "100000"}
			}
			c.Write(hotkvtest.EncodeCommand(cmd...))
		}
		for range n {
			if _, err := c.ReadReply(); err != nil {
				t.Fatal(err)
			}
		}
	}
	do(t, c, "+OK\r\n", "SELECT", "0")
}

// snapWrites runs writers on every type until stop closes; it returns how
// many commands they sent.
func snapWrites(t *testing.T, addr string, n int, stop <-chan struct{}) func() int64 {
	var wg sync.WaitGroup
	var sent atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rdb := redis.NewClient(&redis.Options{Addr: addr, DB: w % 2})
			defer rdb.Close()
			ctx := context.Background()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := strconv.Itoa(r.IntN(n + n/4)) // some keys are new
				var err error
				switch r.IntN(12) {
				case 0:
					err = rdb.Set(ctx, "s:"+k, r.Int(), 0).Err()
				case 1:
					err = rdb.LPush(ctx, "l:"+k, r.Int()).Err()
				case 2:
					err = rdb.HSet(ctx, "h:"+k, "f", r.Int()).Err()
				case 3:
					err = rdb.SAdd(ctx, "t:"+k, r.IntN(100)).Err()
				case 4:
					err = rdb.ZIncrBy(ctx, "z:"+k, 1, "a").Err()
				case 5:
					err = rdb.XAdd(ctx, &redis.XAddArgs{Stream: "x:" + k, Values: []string{"f", "v"}}).Err()
				case 6:
					err = rdb.Del(ctx, "s:"+k, "l:"+k).Err()
				case 7:
					err = rdb.Expire(ctx, "h:"+k, time.Duration(1000+r.IntN(1000))*time.Second).Err()
				case 8:
					err = rdb.Persist(ctx, "e:"+k).Err()
				case 9:
					err = rdb.Rename(ctx, "t:"+k, "t:"+strconv.Itoa(r.IntN(n))).Err()
				case 10:
					err = rdb.Incr(ctx, "c:"+k).Err()
				case 11:
					err = rdb.LPop(ctx, "l:"+k).Err()
				}
				if err != nil && err != redis.Nil && err.Error() != "ERR no such key" &&
					err.Error() != "WRONGTYPE Operation against a key holding the wrong kind of value" {
					t.Errorf("writer: %v", err)
					return
				}
				sent.Add(1)
			}
		}()
	}
	return func() int64 { wg.Wait(); return sent.Load() }
}

func digest(t *testing.T, c *hotkvtest.Conn) string {
	t.Helper()
	return c.Do("DEBUG", "DIGEST")
}

func TestBGSaveUnderWritesHoldsItsStart(t *testing.T) {
	settleHeap(t)
	dir := t.TempDir()
	a := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir))
	c := hotkvtest.Dial(t, a.Addr)
	const n = 3000
	snapFill(t, c, n)
	want := map[int]string{}
	for db := range 2 {
		do(t, c, "+OK\r\n", "SELECT", strconv.Itoa(db))
		want[db] = digest(t, c)
	}
	// about 30 µs a key: the writes below overlap most of the save
	do(t, c, "+OK\r\n", "CONFIG", "SET", "rdb-key-save-delay", "30")
	do(t, c, "+Background saving started\r\n", "BGSAVE")
	stop := make(chan struct{})
	wait := snapWrites(t, a.Addr, n, stop)
	waitField(t, c, "rdb_bgsave_in_progress", "0")
	close(stop)
	sent := wait()
	if got := infoField(t, c, "rdb_last_bgsave_status"); got != "ok" {
		t.Fatalf("BGSAVE status %s", got)
	}
	if sent < 200 {
		t.Fatalf("only %d writes overlapped the save", sent)
	}
	b := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir))
	d := hotkvtest.Dial(t, b.Addr)
	for db := range 2 {
		do(t, d, "+OK\r\n", "SELECT", strconv.Itoa(db))
		if got := digest(t, d); got != want[db] {
			t.Errorf("db %d: the file's digest %q, the dataset at BGSAVE %q (%d writes during it)", db, got, want[db], sent)
		}
	}
	t.Logf("%d writes during the BGSAVE", sent)
}

func TestBGRewriteAOFUnderWritesLosesNothing(t *testing.T) {
	for _, preamble := range []string{"yes", "no"} {
		t.Run("preamble="+preamble, func(t *testing.T) {
			settleHeap(t)
			dir := t.TempDir()
			a := hotkvtest.Start(t, aofOpts(dir, "everysec", hotkvtest.WithConfig("aof-use-rdb-preamble", preamble))...)
			c := hotkvtest.Dial(t, a.Addr)
			const n = 2000
			snapFill(t, c, n)
			do(t, c, "+OK\r\n", "CONFIG", "SET", "rdb-key-save-delay", "50")
			stop := make(chan struct{})
			wait := snapWrites(t, a.Addr, n, stop)
			time.Sleep(50 * time.Millisecond)
			do(t, c, "+Background append only file rewriting started\r\n", "BGREWRITEAOF")
			waitField(t, c, "aof_rewrite_in_progress", "0")
			close(stop)
			sent := wait()
			if got := infoField(t, c, "aof_last_bgrewrite_status"); got != "ok" {
				t.Fatalf("rewrite status %s", got)
			}
			want := map[int]string{}
			for db := range 2 {
				do(t, c, "+OK\r\n", "SELECT", strconv.Itoa(db))
				want[db] = digest(t, c)
			}
			do(t, c, "+OK\r\n", "CONFIG", "SET", "appendfsync", "always") // what is written is on disk
			do(t, c, "+OK\r\n", "SELECT", "0")
			do(t, c, "+OK\r\n", "SET", "last", "1")
			// a second server loads the directory (the first is idle)
			b := hotkvtest.Start(t, aofOpts(dir, "everysec")...)
			d := hotkvtest.Dial(t, b.Addr)
			waitField(t, d, "loading", "0")
			do(t, d, ":1\r\n", "DEL", "last")
			for db := range 2 {
				do(t, d, "+OK\r\n", "SELECT", strconv.Itoa(db))
				if got := digest(t, d); got != want[db] {
					t.Errorf("db %d: loaded digest %q, the dataset %q (%d writes during the rewrite)", db, got, want[db], sent)
				}
			}
			t.Logf("%d writes during the rewrite", sent)
		})
	}
}
