package lock

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// WithReplicaSync: an acquisition counts only once a replica has it (WAIT);
// without a replica attached it fails with ErrNotReplicated and leaves the
// key free.
func TestReplicaSync(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	primary := hotkvtest.Start(t)
	pc := redis.NewClient(&redis.Options{Addr: primary.Addr})
	defer pc.Close()
	l := New(pc, WithReplicaSync(1, 200*time.Millisecond))
	if _, err := l.Obtain(ctx, "job", time.Minute, nil); !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("without a replica: %v, want ErrNotReplicated", err)
	}
	if n := pc.Exists(ctx, "job").Val(); n != 0 {
		t.Fatal("the lock was kept although no replica had it")
	}
	replica := hotkvtest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr})
	defer rc.Close()
	host, port, _ := net.SplitHostPort(primary.Addr)
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up") {
		time.Sleep(10 * time.Millisecond)
	}
	lk, err := l.Obtain(ctx, "job", time.Minute, nil)
	if err != nil {
		t.Fatalf("with a replica: %v", err)
	}
	// WAIT returned: the replica has the lock already
	if v := rc.Get(ctx, "job").Val(); v != lk.Token() {
		t.Fatalf("the replica holds %q, the lock's token is %q", v, lk.Token())
	}
	if err := lk.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
