package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
	"github.com/redis/go-redis/v9"
)

// Commands that name several keys, sent one at a time to a database large
// enough for the event loop to prefetch their keys (eventLoop.prefetchKeys):
// the look-ahead changes no reply, including for calls with a wrong number of
// arguments and keys that do not exist.
func TestMultiKeyCommandsOnALargeDatabase(t *testing.T) {
	srv := hotkvtest.Start(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	pipe := c.Pipeline()
	for i := 0; i < 10000; i++ { // above keyspace.PrefetchMinKeys
		pipe.Set(ctx, fmt.Sprintf("key:%d", i), i, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var pairs []any
	var strKeys []string
	for i := 0; i < 20; i++ { // more than keyspace.PrefetchMax keys
		k := fmt.Sprintf("key:%d", i*7)
		pairs = append(pairs, k, fmt.Sprintf("v%d", i))
		strKeys = append(strKeys, k)
	}
	if err := c.MSet(ctx, pairs...).Err(); err != nil {
		t.Fatal(err)
	}
	vals, err := c.MGet(ctx, append(strKeys, "missing:1", "missing:2")...).Result()
	if err != nil || len(vals) != 22 || vals[0] != "v0" || vals[19] != "v19" || vals[20] != nil {
		t.Fatalf("MGET = %v, %v", vals, err)
	}
	if n, err := c.Exists(ctx, append(strKeys, "missing:1")...).Result(); err != nil || n != 20 {
		t.Fatalf("EXISTS = %d, %v; want 20", n, err)
	}
	if err := c.Do(ctx, "MSET", "key:1", "a", "key:2", "b", "key:3").Err(); err == nil ||
		err.Error() != "ERR wrong number of arguments for 'mset' command" {
		t.Fatalf("MSET with an odd argument count: %v", err)
	}
	if n, err := c.Del(ctx, append(strKeys, "missing:1")...).Result(); err != nil || n != 20 {
		t.Fatalf("DEL = %d, %v; want 20", n, err)
	}
	if n := c.DBSize(ctx).Val(); n != 10000-20 {
		t.Fatalf("DBSIZE = %d, want %d", n, 10000-20)
	}
}
