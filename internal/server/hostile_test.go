package server_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// A client that pipelines big replies and never reads them: the batch stops
// as soon as its output passes client-output-buffer-limit (Redis closes the
// client as the reply grows, not after its pipeline ran), so the server
// builds a few megabytes, not the pipeline's gigabyte; the client is
// dropped and the others are served.
func TestNeverReadingClientStopsAtTheLimit(t *testing.T) {
	onBothTransports(t, func(t *testing.T, opts ...hotkvtest.Option) {
		srv := hotkvtest.Start(t, opts...)
		admin := hotkvtest.Dial(t, srv.Addr)
		args := []string{"RPUSH", "big"}
		for i := 0; i < 10000; i++ {
			args = append(args, strings.Repeat("x", 100))
		}
		admin.Do(args...) // LRANGE big 0 -1: a 1 MB reply, built (not a reference)
		admin.Do("CONFIG", "SET", "client-output-buffer-limit", "normal 8mb 0 0")
		admin.Do("CONFIG", "RESETSTAT")
		attacker := hotkvtest.Dial(t, srv.Addr)
		var pipe []byte
		for i := 0; i < 1000; i++ {
			pipe = append(pipe, hotkvtest.EncodeCommand("LRANGE", "big", "0", "-1")...)
		}
		attacker.Write(pipe) // a gigabyte of replies, never read
		lranges := func() int {
			stats := admin.Do("INFO", "commandstats")
			i := strings.Index(stats, "cmdstat_lrange:calls=")
			if i < 0 {
				return 0
			}
			rest := stats[i+len("cmdstat_lrange:calls="):]
			n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			return n
		}
		// an event loop drops the client at the limit; a goroutine's
		// blocking write stops at what the sockets hold: either way the
		// LRANGEs stop long before the pipeline's end
		deadline := time.Now().Add(10 * time.Second)
		last, stable := -1, 0
		for time.Now().Before(deadline) && stable < 5 {
			if n := lranges(); n == last {
				stable++
			} else {
				last, stable = n, 0
			}
			time.Sleep(20 * time.Millisecond)
		}
		if last > 64 {
			t.Fatalf("%d LRANGEs ran for a client that reads nothing, over its 8 MB limit", last)
		}
		if r := admin.Do("PING"); r != "+PONG\r\n" {
			t.Fatal(r)
		}
		if len(opts) == 0 { // the event loop
			if r := admin.Do("INFO", "stats"); !strings.Contains(r, "client_output_buffer_limit_disconnections:1\r\n") {
				t.Fatalf("not dropped: %s", r)
			}
		}
	})
}

// On an event loop, a pipeline of big replies runs a megabyte of output at a
// time: the loop serves its other clients between the pieces (one turn of
// the loop runs a handful of its commands, not the pipeline's thousand).
func TestBigRepliesYieldTheLoop(t *testing.T) {
	srv := hotkvtest.Start(t)
	admin := hotkvtest.Dial(t, srv.Addr)
	args := []string{"RPUSH", "l"}
	for i := 0; i < 1000; i++ {
		args = append(args, strings.Repeat("x", 100))
	}
	admin.Do(args...) // LRANGE l 0 -1: a 100 KB reply
	admin.Do("CONFIG", "RESETSTAT")
	c := hotkvtest.Dial(t, srv.Addr)
	var pipe []byte
	for i := 0; i < 1000; i++ {
		pipe = append(pipe, hotkvtest.EncodeCommand("LRANGE", "l", "0", "-1")...)
	}
	go func() { _, _ = c.Net().Write(pipe) }()
	for i := 0; i < 1000; i++ {
		if _, err := c.ReadReply(); err != nil {
			t.Fatal(err)
		}
	}
	if n := infoInt(t, admin, "eventloop_cmd_per_cycle_max"); n > 100 {
		t.Fatalf("%d commands in one turn of the loop: the pipeline did not yield", n)
	}
}

// A client that reads its pipeline of big replies slowly gets them whole and
// in order: its reply buffer, past resp.SealMin, grows as a list of pieces
// with the referenced values between them (never copied whole into a bigger
// one), and CLIENT LIST's omem counts the pieces while they wait.
func TestSlowReaderGetsSealedRepliesWhole(t *testing.T) {
	srv := hotkvtest.Start(t)
	admin := hotkvtest.Dial(t, srv.Addr)
	args := []string{"RPUSH", "l"}
	for i := 0; i < 10000; i++ {
		args = append(args, strconv.Itoa(i)+strings.Repeat("x", 90))
	}
	admin.Do(args...)
	admin.Do("SET", "s", strings.Repeat("0123456789abcdef", 1<<16)) // 1 MB: a reference
	wantL, wantS := admin.Do("LRANGE", "l", "0", "-1"), admin.Do("GET", "s")
	c := hotkvtest.Dial(t, srv.Addr)
	c.Do("CLIENT", "SETNAME", "slow")
	var pipe []byte
	const rounds = 24
	for i := 0; i < rounds; i++ {
		pipe = append(pipe, hotkvtest.EncodeCommand("LRANGE", "l", "0", "-1")...)
		pipe = append(pipe, hotkvtest.EncodeCommand("GET", "s")...)
		pipe = append(pipe, hotkvtest.EncodeCommand("PING")...)
	}
	c.Write(pipe)
	omem := func() int {
		for _, line := range strings.Split(admin.Do("CLIENT", "LIST"), "\n") {
			if !strings.Contains(line, " name=slow ") {
				continue
			}
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "omem="); ok {
					n, _ := strconv.Atoi(v)
					return n
				}
			}
		}
		return -1
	}
	deadline := time.Now().Add(10 * time.Second)
	for omem() < 4<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("omem %d: the waiting replies are not counted", omem())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < rounds; i++ {
		for _, want := range []string{wantL, wantS, "+PONG\r\n"} {
			got, err := c.ReadReply()
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("round %d: a %d-byte reply, want %d bytes (%.40q)", i, len(got), len(want), want)
			}
		}
	}
}
