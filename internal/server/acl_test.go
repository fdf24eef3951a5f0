package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// A service's user, from go-redis in both protocols on both connection
// paths: it authenticates with its name and password (HELLO 3 AUTH, or
// AUTH), runs what its rules allow, gets NOPERM for the rest, and its
// connections close when the user is deleted.
func TestACLUserFromGoRedis(t *testing.T) {
	eachProto(t, func(t *testing.T, admin *redis.Client, srv *hotkvtest.Server) {
		ctx := context.Background()
		if err := admin.Do(ctx, "ACL", "SETUSER", "billing", "on", ">s3cret", "~lock:billing:*", "+@read", "+@write", "-flushall").Err(); err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "billing", Password: "s3cret",
			Protocol: admin.Options().Protocol, MaxRetries: -1, PoolSize: 1})
		defer c.Close()
		if who, err := c.Do(ctx, "ACL", "WHOAMI").Result(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
			t.Fatalf("ACL WHOAMI is not @read/@write: %v %v", who, err)
		}
		if ok, err := c.SetNX(ctx, "lock:billing:run", "tok", 30*time.Second).Result(); err != nil || !ok {
			t.Fatalf("the lock: %v %v", ok, err)
		}
		err := c.Set(ctx, "lock:payroll:run", "tok", 0).Err()
		if err == nil || err.Error() != "NOPERM No permissions to access a key" {
			t.Fatalf("another service's key: %v", err)
		}
		if err := c.FlushAll(ctx).Err(); err == nil || err.Error() != "NOPERM User billing has no permissions to run the 'flushall' command" {
			t.Fatalf("FLUSHALL: %v", err)
		}
		bad := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "billing", Password: "wrong",
			Protocol: admin.Options().Protocol, MaxRetries: -1})
		defer bad.Close()
		if err := bad.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Fatalf("wrong password: %v", err)
		}
		// go-redis's own denied CLIENT SETINFO and its HELLO-then-AUTH
		// attempts are in the log too
		log, err := admin.Do(ctx, "ACL", "LOG").Slice()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range log {
			var reason, object string
			switch m := e.(type) {
			case []any:
				for i := 0; i+1 < len(m); i += 2 {
					switch m[i] {
					case "reason":
						reason = m[i+1].(string)
					case "object":
						object = m[i+1].(string)
					}
				}
			case map[any]any:
				reason, object = m["reason"].(string), m["object"].(string)
			}
			seen[reason+" "+object] = true
		}
		for _, want := range []string{"auth auth", "command flushall", "key lock:payroll:run", "command acl|whoami"} {
			if !seen[want] {
				t.Errorf("ACL LOG lacks %q: %v", want, seen)
			}
		}
		if info := admin.Info(ctx, "stats").Val(); !strings.Contains(info, "acl_access_denied_key:1\r\n") ||
			strings.Contains(info, "acl_access_denied_auth:0\r\n") || strings.Contains(info, "acl_access_denied_cmd:0\r\n") {
			t.Fatalf("INFO stats: %s", info)
		}
		if n, err := admin.Do(ctx, "ACL", "DELUSER", "billing").Int(); err != nil || n != 1 {
			t.Fatalf("DELUSER: %v %v", n, err)
		}
		if err := c.Get(ctx, "lock:billing:run").Err(); err == nil || err == redis.Nil {
			t.Fatalf("the deleted user's connection still answers: %v", err)
		}
	})
}

// requirepass is the default user's password: CONFIG SET changes it for new
// connections, ACL GETUSER shows its hash, and nopass returns with "".
func TestACLRequirepass(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("requirepass", "pw1"))
	c := hotkvtest.Dial(t, srv.Addr)
	if r := c.Do("GET", "x"); r != "-NOAUTH Authentication required.\r\n" {
		t.Fatal(r)
	}
	if r := c.Do("AUTH", "pw1"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if r := c.Do("ACL", "LIST"); !strings.Contains(r, "user default on sanitize-payload #") {
		t.Fatal(r)
	}
	c.Do("CONFIG", "SET", "requirepass", "")
	d := hotkvtest.Dial(t, srv.Addr)
	if r := d.Do("GET", "x"); r != "$-1\r\n" {
		t.Fatalf("after requirepass \"\": %q", r)
	}
	if r := d.Do("AUTH", "x"); !strings.Contains(r, "without any password configured") {
		t.Fatal(r)
	}
}

// An aclfile is loaded at start-up (relative to dir); ACL SAVE writes the
// users to it and ACL LOAD reads it back, closing the connections of users
// it no longer has.
func TestACLFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "users.acl"), []byte("user bob on nopass ~b:* +@all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir), hotkvtest.WithConfig("aclfile", "users.acl"))
	c := hotkvtest.Dial(t, srv.Addr)
	if r := c.Do("ACL", "USERS"); r != "*2\r\n$3\r\nbob\r\n$7\r\ndefault\r\n" {
		t.Fatalf("ACL USERS %q", r)
	}
	b := hotkvtest.Dial(t, srv.Addr)
	if r := b.Do("AUTH", "bob", "any"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	c.Do("ACL", "SETUSER", "carol", "on", ">pw", "+ping")
	if r := c.Do("ACL", "SAVE"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "users.acl"))
	if !strings.Contains(string(data), "user carol on sanitize-payload #") || !strings.Contains(string(data), "user bob on nopass") {
		t.Fatalf("saved: %s", data)
	}
	if err := os.WriteFile(filepath.Join(dir, "users.acl"), []byte("user carol on nopass +ping\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := c.Do("ACL", "LOAD"); r != "+OK\r\n" {
		t.Fatal(r)
	}
	if r := c.Do("ACL", "USERS"); r != "*2\r\n$5\r\ncarol\r\n$7\r\ndefault\r\n" {
		t.Fatalf("after LOAD %q", r)
	}
	if _, err := b.ReadReply(); err == nil {
		t.Fatal("bob's connection survived the load that removed bob")
	}
	_ = os.WriteFile(filepath.Join(dir, "users.acl"), []byte("user dave +nosuch\n"), 0o644)
	if r := c.Do("ACL", "LOAD"); !strings.Contains(r, "Unknown command or category name in ACL") {
		t.Fatal(r)
	}
}
