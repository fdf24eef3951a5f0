// Package sentineltest runs Redis Sentinel, unchanged, over HotKV processes:
// a master and two replicas, the master killed with SIGKILL, Sentinel
// promoting a replica and repointing the other, a go-redis FailoverClient
// carrying on, and no write acknowledged with WAIT 1 lost.
package sentineltest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// sentinelBin finds redis-sentinel: on PATH (Debian's redis-sentinel,
// which CI installs), else beside the reference redis-server. The test
// skips with how to get it when there is none (fails when
// HOTKV_REQUIRE_SENTINEL is set, as in CI).
func sentinelBin(t *testing.T) string {
	if p, err := exec.LookPath("redis-sentinel"); err == nil {
		return p
	}
	if ref := hotkvtest.RedisRef(); ref != "" {
		if p := filepath.Join(filepath.Dir(ref), "redis-sentinel"); fileExists(p) {
			return p
		}
	}
	msg := "redis-sentinel not found: apt-get install redis-sentinel, or build the reference Redis (make redis-ref)"
	if os.Getenv("HOTKV_REQUIRE_SENTINEL") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// node is one HotKV process.
type node struct {
	port int
	dir  string
	cmd  *exec.Cmd
}

func (n *node) addr() string { return fmt.Sprintf("127.0.0.1:%d", n.port) }

func (n *node) start(t *testing.T, bin string, args ...string) {
	t.Helper()
	a := append([]string{"--port", strconv.Itoa(n.port), "--bind", "127.0.0.1", "--dir", n.dir, "--loglevel", "notice",
		"--logfile", filepath.Join(n.dir, "log"), "--repl-ping-replica-period", "1"}, args...)
	n.cmd = exec.Command(bin, a...)
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitPing(t, n.addr())
}

func (n *node) kill() {
	if n.cmd != nil && n.cmd.Process != nil {
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
		_ = n.cmd.Wait()
		n.cmd = nil
	}
}

func waitPing(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
		if i > 200 {
			t.Fatalf("%s does not answer", addr)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestSentinelFailover: Sentinel (quorum 1, down-after 3 s: Sentinel
// connects to a newly switched master only after its 1 s ping period, so a
// down-after of 1 s races its first PONG and fails over again) watches a
// HotKV master and two HotKV replicas; each round a writer takes locks
// through a go-redis FailoverClient, confirming each with WAIT 1, while
// the master is killed with SIGKILL; Sentinel must promote a replica and
// repoint the other, the client must carry on, and every confirmed lock must
// be on the new master. The killed node comes back and Sentinel makes it a
// replica. ROUNDS sets the number of kills (default 2; the bar
// is 20: `make sentinel-failover`).
func TestSentinelFailover(t *testing.T) {
	sbin := sentinelBin(t)
	bin := hotkvtest.BuildHotKV(t)
	rounds := 2
	if v, err := strconv.Atoi(os.Getenv("ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	ctx := context.Background()
	nodes := make([]*node, 3)
	for i := range nodes {
		nodes[i] = &node{port: hotkvtest.FreePort(t), dir: t.TempDir()}
		defer nodes[i].kill()
	}
	nodes[0].start(t, bin)
	for _, n := range nodes[1:] {
		n.start(t, bin, "--replicaof", "127.0.0.1", strconv.Itoa(nodes[0].port))
	}
	sport := hotkvtest.FreePort(t)
	sdir := t.TempDir()
	conf := filepath.Join(sdir, "sentinel.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"+
		"sentinel monitor mymaster 127.0.0.1 %d 1\nsentinel down-after-milliseconds mymaster 3000\n"+
		"sentinel failover-timeout mymaster 10000\nsentinel parallel-syncs mymaster 2\n",
		sport, sdir, filepath.Join(sdir, "log"), nodes[0].port)), 0o644); err != nil {
		t.Fatal(err)
	}
	sent := exec.Command(sbin, conf)
	if err := sent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sent.Process.Kill(); _ = sent.Wait() }()
	t.Cleanup(func() {
		if t.Failed() { // what Sentinel saw
			slog, _ := os.ReadFile(filepath.Join(sdir, "log"))
			t.Logf("Sentinel's log:\n%s", slog)
			for _, n := range nodes {
				nlog, _ := os.ReadFile(filepath.Join(n.dir, "log"))
				if len(nlog) > 4000 {
					nlog = nlog[len(nlog)-4000:]
				}
				t.Logf("%s's log (end):\n%s", n.addr(), nlog)
			}
		}
	})
	saddr := fmt.Sprintf("127.0.0.1:%d", sport)
	waitPing(t, saddr)
	sc := redis.NewSentinelClient(&redis.Options{Addr: saddr})
	defer sc.Close()
	// Sentinel discovers both replicas
	deadline := time.Now().Add(30 * time.Second)
	for {
		reps, _ := sc.Replicas(ctx, "mymaster").Result()
		if len(reps) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Sentinel found %d replicas", len(reps))
		}
		time.Sleep(100 * time.Millisecond)
	}
	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: []string{saddr},
		MaxRetries: 3, DialTimeout: 500 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: time.Second})
	defer fc.Close()
	byAddr := map[string]*node{}
	for _, n := range nodes {
		byAddr[n.addr()] = n
	}
	confirmed := map[string]bool{}
	seq := 0
	for round := 1; round <= rounds; round++ {
		addr, err := sc.GetMasterAddrByName(ctx, "mymaster").Result()
		if err != nil {
			t.Fatal(err)
		}
		master := byAddr[addr[0]+":"+addr[1]]
		// locks confirmed by a replica before the kill
		for i := 0; i < 50; i++ {
			seq++
			key := fmt.Sprintf("lock:%d", seq)
			if ok, err := fc.SetNX(ctx, key, "tok", time.Hour).Result(); err != nil || !ok {
				t.Fatalf("round %d: acquire %s: %v %v", round, key, ok, err)
			}
			if n, err := fc.Do(ctx, "WAIT", 1, 1000).Int(); err == nil && n >= 1 {
				confirmed[key] = true
			}
		}
		killed := time.Now()
		master.kill()
		var newAddr string
		for {
			a, err := sc.GetMasterAddrByName(ctx, "mymaster").Result()
			if err == nil && a[0]+":"+a[1] != master.addr() {
				newAddr = a[0] + ":" + a[1]
				break
			}
			if time.Since(killed) > 60*time.Second {
				t.Fatalf("round %d: Sentinel did not promote a replica", round)
			}
			time.Sleep(50 * time.Millisecond)
		}
		// the client carries on, on the promoted replica
		for {
			err := fc.Set(ctx, fmt.Sprintf("after:%d", round), "1", 0).Err()
			if err == nil {
				break
			}
			if time.Since(killed) > 60*time.Second {
				t.Fatalf("round %d: the client did not recover: %v", round, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("round %d: %s killed, %s promoted, clients writing again after %v", round, master.addr(), newAddr, time.Since(killed).Round(time.Millisecond))
		nc := redis.NewClient(&redis.Options{Addr: newAddr})
		for key := range confirmed {
			if nc.Exists(ctx, key).Val() != 1 {
				t.Errorf("round %d: %s was confirmed by WAIT 1 and is lost", round, key)
			}
		}
		nc.Close()
		// the killed node comes back (empty, a master); Sentinel makes it a
		// replica of the master of the moment (+convert-to-slave; Sentinel may
		// have failed over again meanwhile)
		master.start(t, bin)
		deadline := time.Now().Add(60 * time.Second)
		for {
			cur, _ := sc.GetMasterAddrByName(ctx, "mymaster").Result()
			c := redis.NewClient(&redis.Options{Addr: master.addr()})
			info := c.Info(ctx, "replication").Val()
			c.Close()
			if len(cur) == 2 && strings.Contains(info, "master_port:"+cur[1]+"\r\n") && strings.Contains(info, "master_link_status:up") {
				break
			}
			if time.Now().After(deadline) {
				slog, _ := os.ReadFile(filepath.Join(sdir, "log"))
				t.Fatalf("round %d: the old master did not become a replica of %v:\n%s\nSentinel's log:\n%s", round, cur, info, slog)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if len(confirmed) == 0 {
		t.Fatal("no write was confirmed by a replica")
	}
}
