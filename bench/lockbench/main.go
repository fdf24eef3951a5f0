// Command lockbench measures lock cycles per second against a server that
// speaks the Redis protocol. A cycle takes a lock with SET key token NX PX and
// releases it only if the token still matches, either with HotKV's DELEX key
// IFEQ token (-release delex) or with the classic Lua release script sent by
// EVALSHA (-release evalsha), which is what redsync, bsm/redislock and
// Redisson do on Redis.
//
// Each client owns its keys. With -pipeline 1 a cycle is two round trips (the
// acquire, then the release), as a lock user does it; with -pipeline P a client
// sends P acquires of P different keys in one write, reads their replies, then
// sends the P releases, so the server rather than the round trip is the limit.
// Every acquire must succeed and every release must return 1, else the run
// fails: the figure only counts correct cycles.
//
//	go run ./bench/lockbench -addr 127.0.0.1:6379 -release delex -clients 50 -duration 5s
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// releaseScript is the release every Redis lock library ships.
const releaseScript = `if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end`

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	release := flag.String("release", "delex", "release command: delex (DELEX IFEQ) or evalsha (Lua script)")
	clients := flag.Int("clients", 50, "concurrent connections")
	pipeline := flag.Int("pipeline", 1, "cycles in flight per client (acquires sent together, then releases)")
	duration := flag.Duration("duration", 5*time.Second, "how long to run")
	flag.Parse()
	if *release != "delex" && *release != "evalsha" {
		fmt.Fprintln(os.Stderr, "lockbench: -release must be delex or evalsha")
		os.Exit(2)
	}
	sha := ""
	if *release == "evalsha" {
		var err error
		if sha, err = loadScript(*addr); err != nil {
			fmt.Fprintln(os.Stderr, "lockbench: SCRIPT LOAD:", err)
			os.Exit(1)
		}
	}

	var done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, *clients)
	for i := 0; i < *clients; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			if err := run(*addr, id, *pipeline, sha, stop, &done); err != nil {
				errs <- err
			}
		}(i)
	}
	start := time.Now()
	time.Sleep(*duration)
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		fmt.Fprintln(os.Stderr, "lockbench:", err)
		os.Exit(1)
	default:
	}
	n := done.Load()
	fmt.Printf("cycles %d in %.2fs: %.0f cycles/s (release %s, %d clients, pipeline %d)\n",
		n, elapsed.Seconds(), float64(n)/elapsed.Seconds(), *release, *clients, *pipeline)
}

func cmd(b []byte, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, "\r\n"...)
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

func loadScript(addr string) (string, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := c.Write(cmd(nil, "SCRIPT", "LOAD", releaseScript)); err != nil {
		return "", err
	}
	br := bufio.NewReader(c)
	head, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	if head != "$40\r\n" {
		return "", fmt.Errorf("reply %q", head)
	}
	sha, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	return sha[:40], nil
}

func run(addr string, id, pipeline int, sha string, stop chan struct{}, done *atomic.Int64) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	br := bufio.NewReader(c)
	keys := make([]string, pipeline)
	for i := range keys {
		keys[i] = "lockbench:" + strconv.Itoa(id) + ":" + strconv.Itoa(i)
	}
	var buf []byte
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return nil
		default:
		}
		tok := "tok-" + strconv.Itoa(id) + "-" + strconv.Itoa(seq)
		buf = buf[:0]
		for _, k := range keys {
			buf = cmd(buf, "SET", k, tok, "NX", "PX", "30000")
		}
		if err := roundTrip(c, br, buf, pipeline, "+OK\r\n"); err != nil {
			return fmt.Errorf("acquire: %w", err)
		}
		buf = buf[:0]
		for _, k := range keys {
			if sha == "" {
				buf = cmd(buf, "DELEX", k, "IFEQ", tok)
			} else {
				buf = cmd(buf, "EVALSHA", sha, "1", k, tok)
			}
		}
		if err := roundTrip(c, br, buf, pipeline, ":1\r\n"); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		done.Add(int64(pipeline))
	}
}

// roundTrip writes buf and expects n replies, each exactly want.
func roundTrip(c net.Conn, br *bufio.Reader, buf []byte, n int, want string) error {
	if _, err := c.Write(buf); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if string(line) != want {
			return fmt.Errorf("reply %q, want %q", line, want)
		}
	}
	return nil
}
