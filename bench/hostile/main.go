// Command hostile runs the hostile-client battery against a running server:
// one attack at a time, each for -for, while a probe client sends PING every
// -every and times each reply, and the server's resident memory
// (/proc/<pid>/status VmRSS, -pid) is sampled. The attacks:
//
//	neverread   clients pipeline GETs of a 10 MB value and LRANGEs of a
//	            1 MB list without reading a byte (client-output-buffer-limit)
//	bigargs     clients announce huge multibulk counts and bulk lengths and
//	            send them slowly (proto-max-bulk-len, client-query-buffer-limit)
//	garbage     clients send protocol garbage and deep nesting (*1\r\n*1\r\n...)
//	idle        -idle connections opened and left idle (maxclients, memory)
//	slowloris   clients trickle a byte at a time and never end a command
//	            (timeout)
//	subscriber  a subscriber that never reads while a publisher floods its
//	            channel (the pubsub class of client-output-buffer-limit)
//
// For each attack it prints the probe's count, p50, p99 and longest wait,
// the peak RSS, and whether the server still answers. It exits 1 when the
// server stopped answering. The server should run with maxmemory, a
// client-output-buffer-limit, timeout and maxclients set (bench/hostile.sh).
//
//	go run ./bench/hostile -addr 127.0.0.1:6379 -pid $(pidof hotkv)
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	addr  = flag.String("addr", "127.0.0.1:6379", "server address")
	pid   = flag.Int("pid", 0, "server process id (RSS from /proc/<pid>/status); 0: not sampled")
	dur   = flag.Duration("for", 5*time.Second, "length of each attack")
	every = flag.Duration("every", 10*time.Millisecond, "probe interval")
	idleN = flag.Int("idle", 10000, "connections of the idle attack")
	only  = flag.String("attacks", "neverread,bigargs,garbage,idle,slowloris,subscriber", "attacks, in order")
)

func main() {
	flag.Parse()
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: *addr})
	must(admin.FlushAll(ctx).Err())
	must(admin.Set(ctx, "big10mb", strings.Repeat("x", 10<<20), 0).Err())
	vals := make([]any, 10000)
	for i := range vals {
		vals[i] = strings.Repeat("v", 100)
	}
	must(admin.RPush(ctx, "list1mb", vals...).Err())
	fmt.Printf("# hostile: %s, %v per attack, probe every %v\n", *addr, *dur, *every)
	fmt.Printf("%-11s %7s %8s %8s %8s %9s %s\n", "attack", "probes", "p50_ms", "p99_ms", "max_ms", "rss_mb", "server")
	attacks := map[string]func(stop <-chan struct{}){
		"neverread": neverRead, "bigargs": bigArgs, "garbage": garbage, "idle": idle,
		"slowloris": slowloris, "subscriber": subscriber,
	}
	failed := false
	for _, name := range strings.Split(*only, ",") {
		attack := attacks[name]
		if attack == nil {
			fail(fmt.Errorf("unknown attack %q", name))
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); attack(stop) }()
		lat, rss := probe(*dur)
		close(stop)
		wg.Wait()
		up := admin.Ping(ctx).Err() == nil
		slices.Sort(lat)
		q := func(p float64) float64 {
			if len(lat) == 0 {
				return -1
			}
			return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / 1e6
		}
		state := "up"
		if !up {
			state, failed = "DOWN", true
		}
		fmt.Printf("%-11s %7d %8.2f %8.2f %8.2f %9.1f %s\n", name, len(lat), q(0.5), q(0.99), q(1), float64(rss)/(1<<20), state)
		time.Sleep(time.Second) // the attack's connections close
	}
	if failed {
		os.Exit(1)
	}
}

// probe PINGs every interval for d on its own connection and returns the
// waits (ns) and the peak RSS seen.
func probe(d time.Duration) (lat []int64, peak int64) {
	c, err := net.Dial("tcp", *addr)
	if err != nil {
		return nil, rss()
	}
	defer c.Close()
	br := bufio.NewReader(c)
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		start := time.Now()
		_ = c.SetDeadline(start.Add(5 * time.Second))
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			break
		}
		if _, err := br.ReadString('\n'); err != nil {
			lat = append(lat, int64(5*time.Second))
			break
		}
		lat = append(lat, int64(time.Since(start)))
		peak = max(peak, rss())
		time.Sleep(*every)
	}
	return lat, peak
}

// rss is the server's VmRSS in bytes (0 without -pid).
func rss() int64 {
	if *pid == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(*pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// attackers runs n copies of f until stop.
func attackers(n int, stop <-chan struct{}, f func(stop <-chan struct{})) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() { defer wg.Done(); f(stop) }()
	}
	wg.Wait()
}

func dial() net.Conn {
	c, err := net.Dial("tcp", *addr)
	if err != nil {
		return nil
	}
	return c
}

func neverRead(stop <-chan struct{}) {
	attackers(8, stop, func(stop <-chan struct{}) {
		for {
			c := dial()
			if c == nil {
				return
			}
			var pipe []byte
			for range 200 {
				pipe = append(pipe, "*2\r\n$3\r\nGET\r\n$7\r\nbig10mb\r\n*4\r\n$6\r\nLRANGE\r\n$7\r\nlist1mb\r\n$1\r\n0\r\n$2\r\n-1\r\n"...)
			}
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = c.Write(pipe) // and never read
			select {
			case <-stop:
				_ = c.Close()
				return
			case <-time.After(500 * time.Millisecond):
			}
			_ = c.Close()
		}
	})
}

func bigArgs(stop <-chan struct{}) {
	attackers(16, stop, func(stop <-chan struct{}) {
		for i := 0; ; i++ {
			c := dial()
			if c == nil {
				return
			}
			head := "*1048576\r\n"
			if i%2 == 1 {
				head = "*2\r\n$3\r\nSET\r\n$536870912\r\n"
			}
			_, _ = c.Write([]byte(head))
			chunk := []byte(strings.Repeat("a", 64<<10))
			for range 64 { // 4 MB a connection, slowly
				select {
				case <-stop:
					_ = c.Close()
					return
				default:
				}
				_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
				if _, err := c.Write(chunk); err != nil {
					break
				}
			}
			_ = c.Close()
		}
	})
}

func garbage(stop <-chan struct{}) {
	nested := strings.Repeat("*1\r\n", 100000)
	inputs := []string{nested, "$-5\r\n", "*-1\r\n*3\r\n$3\r\nSET", "\x00\xff\xfe garbage\r\n",
		"*1\r\n$4\r\nPING\r\n" + strings.Repeat("x", 70000) + "\r\n", strings.Repeat("A", 1<<20)}
	attackers(8, stop, func(stop <-chan struct{}) {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c := dial()
			if c == nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(time.Second))
			_, _ = c.Write([]byte(inputs[i%len(inputs)]))
			_, _ = c.Read(make([]byte, 512))
			_ = c.Close()
		}
	})
}

func idle(stop <-chan struct{}) {
	var conns []net.Conn
	for range *idleN {
		c := dial()
		if c == nil {
			break
		}
		conns = append(conns, c)
	}
	<-stop
	for _, c := range conns {
		_ = c.Close()
	}
}

func slowloris(stop <-chan struct{}) {
	var n atomic.Int64
	attackers(200, stop, func(stop <-chan struct{}) {
		for {
			c := dial()
			if c == nil {
				return
			}
			n.Add(1)
			for _, b := range []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100000\r\n" + strings.Repeat("s", 100000)) {
				select {
				case <-stop:
					_ = c.Close()
					return
				case <-time.After(50 * time.Millisecond):
				}
				if _, err := c.Write([]byte{b}); err != nil {
					break
				}
			}
			_ = c.Close()
		}
	})
}

func subscriber(stop <-chan struct{}) {
	s := dial()
	if s == nil {
		return
	}
	defer s.Close()
	_, _ = s.Write([]byte("SUBSCRIBE flood\r\n")) // and never read again
	pub := redis.NewClient(&redis.Options{Addr: *addr, PoolSize: 4})
	defer pub.Close()
	msg := strings.Repeat("m", 64<<10)
	attackers(4, stop, func(stop <-chan struct{}) {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = pub.Publish(context.Background(), "flood", msg).Err()
		}
	})
}

func must(err error) {
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "hostile:", err)
	os.Exit(1)
}
