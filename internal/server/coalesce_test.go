package server_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestReplicaStreamCoalesced: on a primary whose event loop busy-polls (as
// cmd/hotkv's does), a replica link's stream waits up to coalesceUs while
// the loop is busy and goes out before the loop sleeps. Whatever the
// rhythm, the replica gets all of it: a write then WAIT, over and over
// (the GETACK and the write wait behind a write just made, and go when
// the loop finds nothing more to do), and pipelined bursts from several
// clients, after which the replica's offset and digest are the primary's.
func TestReplicaStreamCoalesced(t *testing.T) {
	m := hotkvtest.Start(t, hotkvtest.WithBusyPoll(50*time.Microsecond))
	r := hotkvtest.Start(t)
	rc := hotkvtest.Dial(t, r.Addr)
	host, port, _ := net.SplitHostPort(m.Addr)
	rc.Do("REPLICAOF", host, port)
	waitLinkUp(t, rc)
	ctx := context.Background()
	mc := redis.NewClient(&redis.Options{Addr: m.Addr})
	defer mc.Close()
	start := time.Now()
	for i := 0; i < 50; i++ {
		if err := mc.Set(ctx, fmt.Sprint("k", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if n, err := mc.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
			t.Fatalf("round %d: WAIT = %d, %v", i, n, err)
		}
	}
	// output left waiting until the loop's 100 ms tick would take about 5 s
	// (a loop that sleeps with it); it takes milliseconds
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("50 rounds of SET and WAIT took %v: the stream waited for the loop's tick", d)
	}
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := redis.NewClient(&redis.Options{Addr: m.Addr})
			defer cl.Close()
			for b := 0; b < 20; b++ {
				p := cl.Pipeline()
				for i := 0; i < 250; i++ {
					p.Incr(ctx, fmt.Sprint("c", c, ":", i%17))
					p.RPush(ctx, fmt.Sprint("l", c), i)
				}
				if _, err := p.Exec(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n, err := mc.Do(ctx, "WAIT", 1, 5000).Int(); err != nil || n != 1 {
		t.Fatalf("after the bursts: WAIT = %d, %v", n, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mo := infoValue(hotkvtest.Dial(t, m.Addr).Do("INFO", "replication"), "master_repl_offset")
		ro := infoValue(rc.Do("INFO", "replication"), "master_repl_offset")
		md, _ := mc.Do(ctx, "DEBUG", "DIGEST").Text()
		rd := rc.Do("DEBUG", "DIGEST")
		if mo == ro && md != "" && rd == "+"+md+"\r\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica behind: offsets %s / %s, digests %q / %q", mo, ro, md, rd)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
