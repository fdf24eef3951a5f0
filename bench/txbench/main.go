// Command txbench measures MULTI/EXEC transactions per second against a server
// that speaks the Redis protocol: each client sends MULTI, ten commands and
// EXEC in one write and reads the twelve replies, in a loop. redis-benchmark
// cannot send transactions; bench/run.sh runs this against HotKV and
// redis-server side by side.
//
//	go run ./bench/txbench -addr 127.0.0.1:6379 -clients 50 -duration 5s
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

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	clients := flag.Int("clients", 50, "concurrent connections")
	duration := flag.Duration("duration", 5*time.Second, "how long to run")
	keys := flag.Int("keys", 100000, "keyspace size")
	flag.Parse()

	var done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, *clients)
	for i := 0; i < *clients; i++ {
		wg.Add(1)
		go func(seed int) {
			defer wg.Done()
			if err := run(*addr, seed, *keys, stop, &done); err != nil {
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
		fmt.Fprintln(os.Stderr, "txbench:", err)
		os.Exit(1)
	default:
	}
	n := done.Load()
	fmt.Printf("transactions %d in %.2fs: %.0f tx/s (%.0f commands/s)\n", n, elapsed.Seconds(),
		float64(n)/elapsed.Seconds(), float64(n)*12/elapsed.Seconds())
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

func run(addr string, seed, keys int, stop chan struct{}, done *atomic.Int64) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	br := bufio.NewReader(c)
	var buf []byte
	k := seed
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		buf = cmd(buf[:0], "MULTI")
		for i := 0; i < 10; i++ {
			k = (k*1103515245 + 12345) & 0x7fffffff
			buf = cmd(buf, "INCR", "tx:"+strconv.Itoa(k%keys))
		}
		buf = cmd(buf, "EXEC")
		if _, err := c.Write(buf); err != nil {
			return err
		}
		// +OK, 10 x +QUEUED, then *10 followed by 10 integers
		for i := 0; i < 11; i++ {
			if err := skipLine(br); err != nil {
				return err
			}
		}
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		if line != "*10\r\n" {
			return fmt.Errorf("EXEC replied %q", line)
		}
		for i := 0; i < 10; i++ {
			if err := skipLine(br); err != nil {
				return err
			}
		}
		done.Add(1)
	}
}

func skipLine(br *bufio.Reader) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if line[0] == '-' {
		return fmt.Errorf("error reply %q", line)
	}
	return nil
}
