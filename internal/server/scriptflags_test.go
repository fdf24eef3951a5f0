package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestPauseJudgesScriptsByTheirFlags: admission judges a script command by
// the flags of the script it runs (Redis's getCommandFlags), so CLIENT PAUSE
// WRITE holds a script that may write (a shebang without no-writes, or no
// shebang: EVAL may replicate) and lets a no-writes script through, for EVAL,
// EVALSHA and FCALL alike, and EXEC by the flags its scripts were queued with.
// PUBLISH and PFCOUNT may replicate: held too.
func TestPauseJudgesScriptsByTheirFlags(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		admin := hotkvtest.Dial(t, srv.Addr)
		lib := "#!lua name=lib\n" +
			"redis.register_function{function_name='ro', callback=function() return 1 end, flags={'no-writes'}}\n" +
			"redis.register_function('rw', function() return 2 end)"
		if got := admin.Do("FUNCTION", "LOAD", lib); got != "$3\r\nlib\r\n" {
			t.Fatalf("FUNCTION LOAD: %q", got)
		}
		noWrites := "#!lua flags=no-writes\nreturn 1"
		sha := admin.Do("SCRIPT", "LOAD", noWrites)
		sha = sha[len(sha)-42 : len(sha)-2]
		writes := "#!lua\nreturn 1"

		free := [][]string{
			{"EVAL", noWrites, "0"},
			{"EVALSHA", sha, "0"},
			{"FCALL", "ro", "0"},
			{"EVAL_RO", "return 1", "0"},
		}
		heldCmds := [][]string{
			{"EVAL", "return 1", "0"}, // no shebang: EVAL's own flags (may replicate)
			{"EVAL", writes, "0"},
			{"FCALL", "rw", "0"},
			{"PUBLISH", "ch", "m"},
			{"PFCOUNT", "hll"},
		}
		for _, cmd := range free {
			admin.Do("CLIENT", "PAUSE", "60000", "WRITE")
			c := hotkvtest.Dial(t, srv.Addr)
			start := time.Now()
			if got := c.Do(cmd...); got[0] == '-' {
				t.Fatalf("%v: %q", cmd, got)
			}
			if time.Since(start) > 2*time.Second {
				t.Fatalf("%v waited for the pause", cmd)
			}
			admin.Do("CLIENT", "UNPAUSE")
		}
		for _, cmd := range heldCmds {
			admin.Do("CLIENT", "PAUSE", "60000", "WRITE")
			c := hotkvtest.Dial(t, srv.Addr)
			c.Write(hotkvtest.EncodeCommand(cmd...))
			time.Sleep(100 * time.Millisecond)
			_ = c.Net().SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			var b [1]byte
			if n, _ := c.Net().Read(b[:]); n > 0 {
				t.Fatalf("%v answered during CLIENT PAUSE WRITE", cmd)
			}
			admin.Do("CLIENT", "UNPAUSE")
			if got, err := c.ReadReply(); err != nil || got[0] == '-' {
				t.Fatalf("%v after UNPAUSE: %q %v", cmd, got, err)
			}
		}

		// EXEC by its queue's flags: a no-writes script runs, a writing one waits
		c := hotkvtest.Dial(t, srv.Addr)
		c.Do("MULTI")
		c.Do("EVAL", noWrites, "0")
		admin.Do("CLIENT", "PAUSE", "60000", "WRITE")
		if got := c.Do("EXEC"); got != "*1\r\n:1\r\n" {
			t.Fatalf("EXEC of a no-writes script: %q", got)
		}
		admin.Do("CLIENT", "UNPAUSE")
		c.Do("MULTI")
		c.Do("EVAL", writes, "0") // queued before the pause: a write queued during it waits, as in Redis
		admin.Do("CLIENT", "PAUSE", "60000", "WRITE")
		c.Write(hotkvtest.EncodeCommand("EXEC"))
		_ = c.Net().SetReadDeadline(time.Now().Add(150 * time.Millisecond))
		var b [1]byte
		if n, _ := c.Net().Read(b[:]); n > 0 {
			t.Fatal("EXEC of a writing script answered during CLIENT PAUSE WRITE")
		}
		admin.Do("CLIENT", "UNPAUSE")
		if got, err := c.ReadReply(); err != nil || got != "*1\r\n:1\r\n" {
			t.Fatalf("EXEC after UNPAUSE: %q %v", got, err)
		}
	})
}

// TestPausedClientsAreBlockedClients: a client CLIENT PAUSE holds back counts
// in INFO's blocked_clients until it runs, as Redis counts its postponed
// clients (pause.tcl waits on the count).
func TestPausedClientsAreBlockedClients(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		admin := hotkvtest.Dial(t, srv.Addr)
		blocked := func() string {
			info := admin.Do("INFO", "clients")
			i := strings.Index(info, "blocked_clients:")
			return info[i+len("blocked_clients:") : i+len("blocked_clients:")+1]
		}
		admin.Do("CLIENT", "PAUSE", "60000", "WRITE")
		c1, c2 := hotkvtest.Dial(t, srv.Addr), hotkvtest.Dial(t, srv.Addr)
		c1.Write(hotkvtest.EncodeCommand("SET", "k", "v"))
		c2.Write(hotkvtest.EncodeCommand("EVAL", "return 1", "0"))
		deadline := time.Now().Add(5 * time.Second)
		for blocked() != "2" {
			if time.Now().After(deadline) {
				t.Fatalf("blocked_clients %s, want 2 paused clients", blocked())
			}
			time.Sleep(5 * time.Millisecond)
		}
		admin.Do("CLIENT", "UNPAUSE")
		if got, err := c1.ReadReply(); err != nil || got != "+OK\r\n" {
			t.Fatalf("SET after UNPAUSE: %q %v", got, err)
		}
		if got, err := c2.ReadReply(); err != nil || got != ":1\r\n" {
			t.Fatalf("EVAL after UNPAUSE: %q %v", got, err)
		}
		if got := blocked(); got != "0" {
			t.Fatalf("blocked_clients %s after UNPAUSE", got)
		}
		// a read-only script runs no command that may replicate (so that it
		// may run during a write pause): Redis's scriptVerifyWriteCommandAllow
		if got := admin.Do("EVAL_RO", "return redis.call('publish','ch','msg')", "0"); !strings.HasPrefix(got, "-ERR Write commands are not allowed from read-only scripts.") {
			t.Fatalf("EVAL_RO publishing: %q", got)
		}
	})
}

// TestClientReplySkipThenOn: CLIENT REPLY ON after CLIENT REPLY SKIP replies
// OK (Redis clears the skip before the ON replies); the command after a SKIP
// is skipped, and a SKIP before RESET skips RESET's reply, as in Redis.
func TestClientReplySkipThenOn(t *testing.T) {
	srv := hotkvtest.Start(t)
	c := hotkvtest.Dial(t, srv.Addr)
	c.Write(hotkvtest.EncodeCommand("CLIENT", "REPLY", "SKIP"))
	if got := c.Do("CLIENT", "REPLY", "ON"); got != "+OK\r\n" {
		t.Fatalf("CLIENT REPLY ON after SKIP: %q", got)
	}
	c.Write(hotkvtest.EncodeCommand("CLIENT", "REPLY", "SKIP"))
	c.Write(hotkvtest.EncodeCommand("SET", "k", "v")) // skipped
	if got := c.Do("GET", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("GET after a skipped SET: %q", got)
	}
	c.Write(hotkvtest.EncodeCommand("CLIENT", "REPLY", "SKIP"))
	c.Write(hotkvtest.EncodeCommand("RESET")) // skipped
	if got := c.Do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after a skipped RESET: %q", got)
	}
}
