package server_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// startTLS runs a server with a TLS port (certificates from MakeCerts) next
// to its plain one, and returns the TLS address.
func startTLS(t *testing.T, certs *hotkvtest.Certs, extra ...hotkvtest.Option) (*hotkvtest.Server, string) {
	t.Helper()
	opts := append([]hotkvtest.Option{
		hotkvtest.WithFreePort("tls-port"),
		hotkvtest.WithConfig("tls-cert-file", certs.ServerCert),
		hotkvtest.WithConfig("tls-key-file", certs.ServerKey),
		hotkvtest.WithConfig("tls-ca-cert-file", certs.CA),
	}, extra...)
	srv := hotkvtest.Start(t, opts...)
	return srv, net.JoinHostPort("127.0.0.1", strconv.Itoa(srv.Ports["tls-port"]))
}

func tlsClient(t *testing.T, addr string, tc *tls.Config, proto int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: tc, Protocol: proto, MaxRetries: -1, PoolSize: 2,
		DialTimeout: 5 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// go-redis over TLS with a client certificate, in both protocols: the lock
// walk-through works, pipelines too; without a certificate the handshake
// fails while tls-auth-clients is yes, and succeeds once it is optional or no.
func TestTLSGoRedis(t *testing.T) {
	for _, mode := range []string{"loop", "goroutines"} {
		t.Run(mode, func(t *testing.T) {
			var opts []hotkvtest.Option
			if mode == "goroutines" {
				opts = append(opts, hotkvtest.WithGoroutinePerConn())
			}
			testTLSGoRedis(t, opts...)
		})
	}
}

func testTLSGoRedis(t *testing.T, opts ...hotkvtest.Option) {
	certs := hotkvtest.MakeCerts(t)
	srv, addr := startTLS(t, certs, opts...)
	ctx := context.Background()
	for _, proto := range []int{2, 3} {
		c := tlsClient(t, addr, certs.ClientTLS(true), proto)
		if ok, err := c.SetNX(ctx, fmt.Sprint("lock:", proto), "tok", 30*time.Second).Result(); err != nil || !ok {
			t.Fatalf("RESP%d: SET NX over TLS: %v %v", proto, ok, err)
		}
		pipe := c.Pipeline()
		for range 100 {
			pipe.Incr(ctx, fmt.Sprint("n", proto))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if v := c.Get(ctx, fmt.Sprint("n", proto)).Val(); v != "100" {
			t.Fatalf("RESP%d: %q", proto, v)
		}
		// replies bigger than a TLS record and than what the socket takes at
		// once, pipelined: the loop encrypts them a chunk at a time
		big := strings.Repeat("0123456789", 400_000)
		c.Set(ctx, "big", big, 0)
		gets := c.Pipeline()
		for range 3 {
			gets.Get(ctx, "big")
		}
		res, err := gets.Exec(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if v := r.(*redis.StringCmd).Val(); v != big {
				t.Fatalf("RESP%d: a %d-byte value came back as %d bytes", proto, len(big), len(v))
			}
		}
	}
	noCert := tlsClient(t, addr, certs.ClientTLS(false), 2)
	if err := noCert.Ping(ctx).Err(); err == nil {
		t.Fatal("a client without a certificate was served while tls-auth-clients is yes")
	}
	plain := hotkvtest.Dial(t, srv.Addr)
	for _, mode := range []string{"optional", "no"} {
		if r := plain.Do("CONFIG", "SET", "tls-auth-clients", mode); r != "+OK\r\n" {
			t.Fatal(r)
		}
		c := tlsClient(t, addr, certs.ClientTLS(false), 2)
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatalf("tls-auth-clients %s: %v", mode, err)
		}
	}
	if r := plain.Do("INFO", "server"); !strings.Contains(r, "listener2:name=tls,bind=127.0.0.1,port=") {
		t.Fatalf("INFO listener2: %s", r)
	}
	// a plain client on the TLS port is not served
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_, _ = raw.Write([]byte("PING\r\n"))
	_ = raw.SetReadDeadline(time.Now().Add(15 * time.Second))
	buf := make([]byte, 64)
	if n, _ := raw.Read(buf); strings.Contains(string(buf[:n]), "PONG") {
		t.Fatal("plain PING answered on the TLS port")
	}
}

// tls-auth-clients-user CN: the client certificate's Common Name is the
// user the connection starts as; a missing or disabled user leaves it the
// default user and logs tls-cert.
func TestTLSCertUser(t *testing.T) {
	certs := hotkvtest.MakeCerts(t)
	srv, addr := startTLS(t, certs, hotkvtest.WithConfig("tls-auth-clients-user", "CN"))
	ctx := context.Background()
	admin := hotkvtest.Dial(t, srv.Addr)
	c := tlsClient(t, addr, certs.ClientTLS(true), 2)
	if who := c.Do(ctx, "ACL", "WHOAMI").Val(); who != "default" {
		t.Fatalf("no such user: WHOAMI %v", who)
	}
	if r := admin.Do("ACL", "LOG"); !strings.Contains(r, "tls-cert") || !strings.Contains(r, "Client-only") {
		t.Fatalf("ACL LOG: %q", r)
	}
	if r := admin.Do("INFO", "stats"); !strings.Contains(r, "acl_access_denied_tls_cert:1\r\n") {
		t.Fatal(r)
	}
	admin.Do("ACL", "SETUSER", "Client-only", "on", ">x", "allcommands", "allkeys")
	c2 := tlsClient(t, addr, certs.ClientTLS(true), 3)
	if who := c2.Do(ctx, "ACL", "WHOAMI").Val(); who != "Client-only" {
		t.Fatalf("WHOAMI %v", who)
	}
}

// CONFIG SET of the TLS parameters: bad values are refused with Redis's
// error and change nothing; tls-port moves the listener; protocols apply to
// new connections.
func TestTLSConfigSet(t *testing.T) {
	certs := hotkvtest.MakeCerts(t)
	srv, addr := startTLS(t, certs)
	ctx := context.Background()
	admin := hotkvtest.Dial(t, srv.Addr)
	for _, kv := range [][2]string{
		{"tls-key-file", "/nonexistent/key.pem"}, {"tls-protocols", "TLSv9"}, {"tls-ciphers", "NOSUCH-CIPHER"},
		{"tls-ciphersuites", "TLS_AES_128_GCM_SHA256"}, {"tls-ca-cert-file", certs.ServerKey},
	} {
		want := "-ERR CONFIG SET failed (possibly related to argument '" + kv[0] + "') - Unable to update TLS configuration. Check server logs.\r\n"
		if r := admin.Do("CONFIG", "SET", kv[0], kv[1]); r != want {
			t.Errorf("CONFIG SET %s %s: %q", kv[0], kv[1], r)
		}
	}
	if err := tlsClient(t, addr, certs.ClientTLS(true), 2).Ping(ctx).Err(); err != nil {
		t.Fatalf("after refused changes: %v", err)
	}
	admin.Do("CONFIG", "SET", "tls-protocols", "TLSv1.3")
	tc := certs.ClientTLS(true)
	tc.MaxVersion = tls.VersionTLS12
	if err := tlsClient(t, addr, tc, 2).Ping(ctx).Err(); err == nil {
		t.Fatal("TLS 1.2 accepted with tls-protocols TLSv1.3")
	}
	admin.Do("CONFIG", "SET", "tls-protocols", "")
	// the certificate files are read again on CONFIG SET of the same path
	if r := admin.Do("CONFIG", "SET", "tls-cert-file", certs.ServerCert); r != "+OK\r\n" {
		t.Fatal(r)
	}
	port := hotkvtest.FreePort(t)
	if r := admin.Do("CONFIG", "SET", "tls-port", strconv.Itoa(port)); r != "+OK\r\n" {
		t.Fatal(r)
	}
	moved := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := tlsClient(t, moved, certs.ClientTLS(true), 2).Ping(ctx).Err(); err != nil {
		t.Fatalf("on the new tls-port: %v", err)
	}
	if err := tlsClient(t, addr, certs.ClientTLS(true), 2).Ping(ctx).Err(); err == nil {
		t.Fatal("the old tls-port still serves")
	}
	admin.Do("CONFIG", "SET", "tls-port", "0")
	if err := tlsClient(t, moved, certs.ClientTLS(true), 2).Ping(ctx).Err(); err == nil {
		t.Fatal("tls-port 0 still serves")
	}
	_ = os.Remove(certs.ServerKey)
}

// QUIT and a revoked subscriber's own ACL SETUSER close a TLS connection
// once the reply is out, and CLIENT KILL closes another, on both paths.
func TestTLSConnectionsClose(t *testing.T) {
	for _, mode := range []string{"loop", "goroutines"} {
		t.Run(mode, func(t *testing.T) {
			var opts []hotkvtest.Option
			if mode == "goroutines" {
				opts = append(opts, hotkvtest.WithGoroutinePerConn())
			}
			certs := hotkvtest.MakeCerts(t)
			srv, addr := startTLS(t, certs, opts...)
			admin := hotkvtest.Dial(t, srv.Addr)
			admin.Do("ACL", "SETUSER", "psuser", "on", ">pspass", "+@all", "resetchannels", "&foo:1")
			dial := func() (*tls.Conn, *bufio.Reader) {
				c, err := tls.Dial("tcp", addr, certs.ClientTLS(true))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close() })
				return c, bufio.NewReader(c)
			}
			do := func(c *tls.Conn, br *bufio.Reader, args ...string) (string, error) {
				if _, err := c.Write(hotkvtest.EncodeCommand(args...)); err != nil {
					return "", err
				}
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				var b []byte
				err := hotkvtest.ReadReplyFrom(br, &b)
				return string(b), err
			}
			closed := func(what string, c *tls.Conn, br *bufio.Reader) {
				_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := br.ReadByte(); err == nil || strings.Contains(err.Error(), "timeout") {
					t.Fatalf("%s: the connection stayed open (%v)", what, err)
				}
			}
			c, br := dial()
			if r, err := do(c, br, "QUIT"); r != "+OK\r\n" || err != nil {
				t.Fatalf("QUIT: %q %v", r, err)
			}
			closed("QUIT", c, br)
			c, br = dial()
			do(c, br, "HELLO", "3", "AUTH", "psuser", "pspass")
			do(c, br, "SUBSCRIBE", "foo:1")
			if r, err := do(c, br, "ACL", "SETUSER", "psuser", "resetchannels"); r != "+OK\r\n" || err != nil {
				t.Fatalf("SETUSER: %q %v", r, err)
			}
			closed("revoked subscriber", c, br)
			c, br = dial()
			do(c, br, "CLIENT", "SETNAME", "victim")
			if r := admin.Do("CLIENT", "KILL", "USER", "default"); !strings.HasPrefix(r, ":") {
				t.Fatal(r)
			}
			closed("CLIENT KILL", c, br)
		})
	}
}

// Many TLS clients at once on the event loop, with pipelines and replies
// of every size: each gets exactly its own answers.
func TestTLSConcurrentClients(t *testing.T) {
	certs := hotkvtest.MakeCerts(t)
	_, addr := startTLS(t, certs)
	ctx := context.Background()
	errs := make(chan error, 16)
	for w := range 16 {
		go func() {
			c := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: certs.ClientTLS(true), Protocol: 2 + w%2, PoolSize: 1, MaxRetries: -1})
			defer c.Close()
			for round := range 20 {
				key := fmt.Sprintf("k:%d:%d", w, round)
				val := strings.Repeat(string(rune('a'+w)), 1+(w*round*997)%300_000)
				pipe := c.Pipeline()
				pipe.Set(ctx, key, val, 0)
				for range 10 {
					pipe.Get(ctx, key)
					pipe.Incr(ctx, fmt.Sprint("n:", w))
				}
				res, err := pipe.Exec(ctx)
				if err != nil {
					errs <- err
					return
				}
				for i := 1; i < len(res); i += 2 {
					if got := res[i].(*redis.StringCmd).Val(); got != val {
						errs <- fmt.Errorf("client %d round %d: a %d-byte value came back as %d bytes", w, round, len(val), len(got))
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// tls-replication yes: a replica reaches its master's TLS port, which
// requires client certificates (tls-auth-clients yes), with its own
// tls-cert-file as its client certificate (Redis's tls.tcl "tls-cert-file
// is also used as a client cert"); over the RDB channel too, and the stream
// follows. Without tls-replication the plain link to a TLS port fails.
func TestTLSReplication(t *testing.T) {
	ctx := context.Background()
	certs := hotkvtest.MakeCerts(t)
	m, mtls := startTLS(t, certs)
	mc := redis.NewClient(&redis.Options{Addr: m.Addr})
	defer mc.Close()
	for i := range 100 {
		mc.Set(ctx, "k:"+strconv.Itoa(i), i, 0)
	}
	r, _ := startTLS(t, certs, hotkvtest.WithConfig("tls-replication", "yes"),
		hotkvtest.WithConfig("tls-cert-file", certs.GenericCert), hotkvtest.WithConfig("tls-key-file", certs.GenericKey))
	rc := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer rc.Close()
	host, port, _ := net.SplitHostPort(mtls)
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	waitClientLinkUp(t, rc, "no link over TLS")
	deadline := time.Now().Add(20 * time.Second)
	mc.Set(ctx, "after", "sync", 0)
	for rc.Get(ctx, "after").Val() != "sync" || rc.DBSize(ctx).Val() != 101 {
		if time.Now().After(deadline) {
			t.Fatalf("the stream did not follow: %d keys", rc.DBSize(ctx).Val())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(mc.ClientList(ctx).Val(), "flags=SC") && !strings.Contains(mc.Info(ctx, "stats").Val(), "sync_full:1") {
		t.Error("no full sync counted")
	}
	// a replica without tls-replication cannot sync with the TLS port
	p := hotkvtest.Start(t)
	pc := redis.NewClient(&redis.Options{Addr: p.Addr})
	defer pc.Close()
	if err := pc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if strings.Contains(pc.Info(ctx, "replication").Val(), "master_link_status:up") {
		t.Error("a plain link to a TLS port came up")
	}
}

// A replica's TLS link offers the suites of its own tls-ciphers (and
// versions of tls-protocols), as Redis's client context: restricted to one
// its master does not accept, the link does not come up; given one it
// does, it comes up at the next attempt.
func TestTLSReplicationCiphers(t *testing.T) {
	ctx := context.Background()
	certs := hotkvtest.MakeCerts(t)
	_, mtls := startTLS(t, certs, hotkvtest.WithConfig("tls-protocols", "TLSv1.2"),
		hotkvtest.WithConfig("tls-ciphers", "ECDHE-ECDSA-AES256-GCM-SHA384"))
	r, _ := startTLS(t, certs, hotkvtest.WithConfig("tls-replication", "yes"),
		hotkvtest.WithConfig("tls-cert-file", certs.GenericCert), hotkvtest.WithConfig("tls-key-file", certs.GenericKey),
		hotkvtest.WithConfig("tls-protocols", "TLSv1.2"),
		hotkvtest.WithConfig("tls-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256"))
	rc := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer rc.Close()
	host, port, _ := net.SplitHostPort(mtls)
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up") {
		t.Fatal("a link with no suite in common came up")
	}
	if err := rc.ConfigSet(ctx, "tls-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384").Err(); err != nil {
		t.Fatal(err)
	}
	waitClientLinkUp(t, rc, "no link with a suite in common")
}
