package difftest

import (
	"context"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestRedisReplicaOfHotKVUnderWrites: redis-server 8.6.3 replicates HotKV
// while clients write. HotKV encodes the replica's snapshot in the
// background (slowed here by rdb-key-save-delay so the writes overlap it)
// and holds the stream from the snapshot's moment until the payload is
// sent; the replica must end with HotKV's dataset (DEBUG DIGEST).
func TestRedisReplicaOfHotKVUnderWrites(t *testing.T) {
	sock := startRedis(t)
	srv := hotkvtest.Start(t)
	ctx := context.Background()
	hk := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer hk.Close()
	rd := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer rd.Close()
	const n = 20000
	if err := hk.Do(ctx, "DEBUG", "POPULATE", n, "key", 32).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		k := strconv.Itoa(i)
		hk.RPush(ctx, "list:"+k, "a", k)
		hk.HSet(ctx, "hash:"+k, "f", k)
		hk.ZAdd(ctx, "zset:"+k, redis.Z{Score: float64(i), Member: k})
	}
	if err := hk.ConfigSet(ctx, "rdb-key-save-delay", "20").Err(); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent [3]int
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer c.Close()
			r := rand.New(rand.NewPCG(uint64(w), 3))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := strconv.Itoa(r.IntN(n))
				switch r.IntN(5) {
				case 0:
					c.Set(ctx, "key:"+k, r.Int(), 0)
				case 1:
					c.Del(ctx, "key:"+k)
				case 2:
					c.LPush(ctx, "list:"+strconv.Itoa(r.IntN(600)), r.Int())
				case 3:
					c.HIncrBy(ctx, "hash:"+strconv.Itoa(r.IntN(600)), "n", 1)
				case 4:
					c.Incr(ctx, "counter:"+strconv.Itoa(r.IntN(50)))
				}
				sent[w]++
			}
		}()
	}
	host, port, _ := net.SplitHostPort(srv.Addr)
	if err := rd.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(rd.Info(ctx, "replication").Val(), "master_link_status:up") {
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not sync: %s", rd.Info(ctx, "replication").Val())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // writes after the sync, on the stream
	close(stop)
	wg.Wait()
	want := hk.Do(ctx, "DEBUG", "DIGEST").Val()
	var got any
	for time.Now().Before(deadline) {
		if got = rd.Do(ctx, "DEBUG", "DIGEST").Val(); got == want {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != want {
		t.Fatalf("replica digest %v, HotKV %v", got, want)
	}
	t.Logf("%d writes while the replica synced and after", sent[0]+sent[1]+sent[2])
}
