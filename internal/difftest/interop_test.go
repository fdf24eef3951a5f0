package difftest

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// linkProxy carries a replica's connections to its master and counts the
// bytes from the master; cut closes them and refuses new ones until mend.
type linkProxy struct {
	ln     net.Listener
	master string
	down   atomic.Bool
	bytes  atomic.Int64 // master to replica
	mu     sync.Mutex
	conns  []net.Conn
}

func newLinkProxy(t *testing.T, master string) *linkProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &linkProxy{ln: ln, master: master}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if p.down.Load() {
				c.Close()
				continue
			}
			m, err := net.Dial("tcp", master)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, m)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(m, c); m.Close(); c.Close() }()
			go func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := m.Read(buf)
					if n > 0 {
						p.bytes.Add(int64(n))
						if _, werr := c.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				m.Close()
				c.Close()
			}()
		}
	}()
	return p
}

func (p *linkProxy) addr() (host, port string) {
	host, port, _ = net.SplitHostPort(p.ln.Addr().String())
	return host, port
}

// cut drops every connection and refuses new ones.
func (p *linkProxy) cut() {
	p.down.Store(true)
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
}

func (p *linkProxy) mend() { p.down.Store(false) }

// interopPair starts redis-server 8.6.3 (repl-diskless-sync-delay 0) and
// HotKV, and returns them as master and replica (HotKV the master when
// hotkvMaster) with the master's address; not yet linked.
func interopPair(t *testing.T, hotkvMaster bool) (master, replica *redis.Client, maddr string) {
	t.Helper()
	raddr := startRedisTCP(t)
	srv := hotkvtest.Start(t)
	rd := redis.NewClient(&redis.Options{Addr: raddr})
	hk := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rd.Close(); hk.Close() })
	rd.ConfigSet(context.Background(), "repl-diskless-sync-delay", "0")
	if hotkvMaster {
		return hk, rd, srv.Addr
	}
	return rd, hk, raddr
}

// mixedWrites sends n writes of every type to c, pipelined, drawn from r.
func mixedWrites(t *testing.T, c *redis.Client, r *rand.Rand, n int) {
	t.Helper()
	ctx := context.Background()
	for done := 0; done < n; {
		pipe := c.Pipeline()
		for i := 0; i < 1000 && done < n; i, done = i+1, done+1 {
			k := strconv.Itoa(r.IntN(5000))
			switch r.IntN(12) {
			case 0:
				pipe.Set(ctx, "s:"+k, r.Int(), 0)
			case 1:
				pipe.Incr(ctx, "n:"+k)
			case 2:
				pipe.Del(ctx, "s:"+k, "l:"+k)
			case 3:
				pipe.LPush(ctx, "l:"+k, r.IntN(100))
			case 4:
				pipe.RPop(ctx, "l:"+k)
			case 5:
				pipe.HSet(ctx, "h:"+k, "f"+strconv.Itoa(r.IntN(20)), r.Int())
			case 6:
				pipe.SAdd(ctx, "set:"+k, r.IntN(50))
			case 7:
				pipe.ZAdd(ctx, "z:"+k, redis.Z{Score: float64(r.IntN(1000)), Member: r.IntN(30)})
			case 8:
				pipe.XAdd(ctx, &redis.XAddArgs{Stream: "x:" + strconv.Itoa(r.IntN(20)), Values: []any{"f", r.Int()}})
			case 9:
				pipe.Expire(ctx, "s:"+k, time.Hour)
			case 10:
				pipe.Append(ctx, "s:"+k, "x")
			case 11:
				pipe.Set(ctx, "lock:"+strconv.Itoa(r.IntN(200)), "tok", 0)
				pipe.Do(ctx, "DELEX", "lock:"+strconv.Itoa(r.IntN(200)), "IFEQ", "tok")
			}
		}
		if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
			// WRONGTYPE replies are writes refused alike on both sides
			if _, ok := err.(redis.Error); !ok {
				t.Fatal(err)
			}
		}
	}
}

// TestInteropStreamAndLinkDrop: both directions with redis-server 8.6.3.
// The replica reaches its master through a proxy that counts the bytes
// the master sends. A full sync of a dataset (200,000 keys and every
// type), then 100,000 mixed writes
// streamed: equal DEBUG DIGEST. Then the link is cut for 2 seconds while
// the writes go on; the replica comes back with PSYNC and gets only the
// backlog: the bytes carried from the mend until the datasets are equal
// are the stream written meanwhile (master_repl_offset's advance) and a
// handshake, not a snapshot (sync_full stays 1, sync_partial_ok is 1).
func TestInteropStreamAndLinkDrop(t *testing.T) {
	if testing.Short() {
		t.Skip("100k writes each way: not in -short")
	}
	ctx := context.Background()
	for _, hotkvMaster := range []bool{true, false} {
		name := "Redis replica of HotKV"
		if !hotkvMaster {
			name = "HotKV replica of Redis"
		}
		t.Run(name, func(t *testing.T) {
			master, replica, maddr := interopPair(t, hotkvMaster)
			r := rand.New(rand.NewPCG(7, 11))
			if err := master.Do(ctx, "DEBUG", "POPULATE", 200000, "pop", 20).Err(); err != nil {
				t.Fatal(err)
			}
			mixedWrites(t, master, r, 20000)
			p := newLinkProxy(t, maddr)
			host, port := p.addr()
			if err := replica.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
				t.Fatal(err)
			}
			waitLinkUp(t, replica)
			waitDigests(t, master, replica)
			fullBytes := p.bytes.Load()
			mixedWrites(t, master, r, 100000)
			waitDigests(t, master, replica)
			t.Logf("full sync %d bytes; 100,000 writes streamed, digests equal", fullBytes)

			p.cut()
			before, _ := strconv.ParseInt(infoField(master.Info(ctx, "replication").Val(), "master_repl_offset"), 10, 64)
			// 4,000 writes spread over the 2 s (about 200 KB of stream:
			// well inside the default 1 MB backlog)
			for range 8 {
				mixedWrites(t, master, r, 500)
				time.Sleep(250 * time.Millisecond)
			}
			after, _ := strconv.ParseInt(infoField(master.Info(ctx, "replication").Val(), "master_repl_offset"), 10, 64)
			p.bytes.Store(0)
			p.mend()
			waitLinkUp(t, replica)
			waitDigests(t, master, replica)
			got, missed := p.bytes.Load(), after-before
			stats := master.Info(ctx, "stats").Val()
			if full, ok := infoField(stats, "sync_full"), infoField(stats, "sync_partial_ok"); full != "1" || ok != "1" {
				t.Fatalf("sync_full %s, sync_partial_ok %s: not a partial resync", full, ok)
			}
			// the stream written during the drop, the +CONTINUE line and
			// perhaps a PING or REPLCONF GETACK of the master's (the
			// master's offset moves with those too, after `after`)
			if got < missed || got > missed+2048 || got > fullBytes/4 {
				t.Fatalf("resync carried %d bytes, the stream written meanwhile is %d", got, missed)
			}
			t.Logf("2 s drop: %d bytes written meanwhile, %d bytes carried by the resync (full sync was %d)", missed, got, fullBytes)
		})
	}
}
