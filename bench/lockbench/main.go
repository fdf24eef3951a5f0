// Command lockbench measures lock cycles per second against a server that
// speaks the Redis protocol. A cycle takes a lock with SET key token NX PX and
// releases it only if the token still matches, either with HotKV's DELEX key
// IFEQ token (-release delex) or with the classic Lua release script, sent by
// EVALSHA (-release evalsha: what redsync, bsm/redislock and Redisson do on
// Redis) or by EVAL with the script's text (-release eval).
//
// Each client owns its keys. With -pipeline 1 a cycle is two round trips (the
// acquire, then the release), as a lock user does it; with -pipeline P a client
// sends P acquires of P different keys in one write, reads their replies, then
// sends the P releases, so the server rather than the round trip is the limit.
// Every acquire must succeed and every release must return 1, else the run
// fails: the figure only counts correct cycles.
//
// The load generator shares the machine with the server, so its own cost
// dilutes the comparison. On Linux the default engine (-engine epoll) drives
// every connection from one thread with epoll and blocking writes, as
// redis-benchmark does; -engine go runs a goroutine per connection over Go's
// net package (about three times the client CPU per cycle).
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
	release := flag.String("release", "delex", "release command: delex (DELEX IFEQ), evalsha or eval (the Lua script)")
	engine := flag.String("engine", defaultEngine, "load generator: epoll (one thread, Linux) or go (a goroutine per connection)")
	clients := flag.Int("clients", 50, "concurrent connections")
	pipeline := flag.Int("pipeline", 1, "cycles in flight per client (acquires sent together, then releases)")
	duration := flag.Duration("duration", 5*time.Second, "how long to run")
	flag.Parse()
	rel := releaser{kind: *release}
	switch *release {
	case "delex", "eval":
	case "evalsha":
		var err error
		if rel.sha, err = loadScript(*addr); err != nil {
			fmt.Fprintln(os.Stderr, "lockbench: SCRIPT LOAD:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "lockbench: -release must be delex, evalsha or eval")
		os.Exit(2)
	}
	var n int64
	var elapsed time.Duration
	var err error
	switch *engine {
	case "epoll":
		n, elapsed, err = runEpoll(*addr, *clients, *pipeline, rel, *duration)
	case "go":
		n, elapsed, err = runGoroutines(*addr, *clients, *pipeline, rel, *duration)
	default:
		err = fmt.Errorf("-engine must be epoll or go")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lockbench:", err)
		os.Exit(1)
	}
	fmt.Printf("cycles %d in %.2fs: %.0f cycles/s (release %s, %d clients, pipeline %d, engine %s)\n",
		n, elapsed.Seconds(), float64(n)/elapsed.Seconds(), *release, *clients, *pipeline, *engine)
}

// releaser builds the release command of one lock.
type releaser struct {
	kind string // delex, evalsha or eval
	sha  string // the script's SHA1, for evalsha
}

func (r releaser) append(b []byte, key, tok string) []byte {
	switch r.kind {
	case "evalsha":
		return cmd(b, "EVALSHA", r.sha, "1", key, tok)
	case "eval":
		return cmd(b, "EVAL", releaseScript, "1", key, tok)
	}
	return cmd(b, "DELEX", key, "IFEQ", tok)
}

// lockKeys are client id's keys, one per cycle in flight.
func lockKeys(id, pipeline int) []string {
	keys := make([]string, pipeline)
	for i := range keys {
		keys[i] = "lockbench:" + strconv.Itoa(id) + ":" + strconv.Itoa(i)
	}
	return keys
}

// batch appends the acquires (release false) or the releases of keys with
// token tok.
func batch(b []byte, keys []string, tok string, release bool, rel releaser) []byte {
	for _, k := range keys {
		if release {
			b = rel.append(b, k, tok)
		} else {
			b = cmd(b, "SET", k, tok, "NX", "PX", "30000")
		}
	}
	return b
}

func token(id, seq int) string { return "tok-" + strconv.Itoa(id) + "-" + strconv.Itoa(seq) }

// runGoroutines runs one goroutine per connection; it returns the cycles done.
func runGoroutines(addr string, clients, pipeline int, rel releaser, d time.Duration) (int64, time.Duration, error) {
	var done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			if err := run(addr, id, pipeline, rel, stop, &done); err != nil {
				errs <- err
			}
		}(i)
	}
	start := time.Now()
	time.Sleep(d)
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		return 0, elapsed, err
	default:
	}
	return done.Load(), elapsed, nil
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

func run(addr string, id, pipeline int, rel releaser, stop chan struct{}, done *atomic.Int64) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	br := bufio.NewReader(c)
	keys := lockKeys(id, pipeline)
	var buf []byte
	for seq := 0; ; seq++ {
		select {
		case <-stop:
			return nil
		default:
		}
		tok := token(id, seq)
		buf = batch(buf[:0], keys, tok, false, rel)
		if err := roundTrip(c, br, buf, pipeline, "+OK\r\n"); err != nil {
			return fmt.Errorf("acquire: %w", err)
		}
		buf = batch(buf[:0], keys, tok, true, rel)
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
