// Command pubbench measures PUBLISH against a server that speaks the Redis
// protocol: -subs connections subscribe to one channel, -pubs connections
// publish 32-byte messages (pipelined -pipeline deep) for -duration, and it
// reports publishes per second and messages delivered per second.
// redis-benchmark cannot subscribe; bench/run.sh runs this against HotKV and
// redis-server side by side, with 1 and 1,000 subscribers.
//
//	go run ./bench/pubbench -addr 127.0.0.1:6379 -subs 1000 -duration 5s
package main

import (
	"bufio"
	"bytes"
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
	subs := flag.Int("subs", 1, "subscriber connections")
	pubs := flag.Int("pubs", 10, "publisher connections")
	pipeline := flag.Int("pipeline", 1, "PUBLISH commands per write")
	duration := flag.Duration("duration", 5*time.Second, "how long to publish")
	flag.Parse()

	var delivered, published atomic.Int64
	var ready sync.WaitGroup
	conns := make([]net.Conn, *subs)
	for i := range conns {
		c, err := net.Dial("tcp", *addr)
		if err != nil {
			fail(err)
		}
		conns[i] = c
		ready.Add(1)
		go func(c net.Conn) {
			br := bufio.NewReaderSize(c, 64<<10)
			if _, err := c.Write([]byte("*2\r\n$9\r\nSUBSCRIBE\r\n$5\r\nbench\r\n")); err != nil {
				fail(err)
			}
			for i := 0; i < 6; i++ { // *3 $9 subscribe $5 bench :1
				if _, err := br.ReadSlice('\n'); err != nil {
					fail(err)
				}
			}
			ready.Done()
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if bytes.Equal(line, []byte("$7\r\n")) {
					delivered.Add(1)
				}
			}
		}(c)
	}
	ready.Wait()
	msg := bytes.Repeat([]byte("x"), 32)
	one := []byte("*3\r\n$7\r\nPUBLISH\r\n$5\r\nbench\r\n$32\r\n" + string(msg) + "\r\n")
	batch := bytes.Repeat(one, *pipeline)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < *pubs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", *addr)
			if err != nil {
				fail(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Write(batch); err != nil {
					fail(err)
				}
				for j := 0; j < *pipeline; j++ {
					line, err := br.ReadSlice('\n')
					if err != nil || line[0] != ':' {
						fail(fmt.Errorf("PUBLISH replied %q %v", line, err))
					}
				}
				published.Add(int64(*pipeline))
			}
		}()
	}
	start := time.Now()
	time.Sleep(*duration)
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	time.Sleep(200 * time.Millisecond) // let the last deliveries arrive
	for _, c := range conns {
		c.Close()
	}
	p, d := published.Load(), delivered.Load()
	fmt.Printf("subscribers %d publishes %d in %.2fs: %.0f publish/s %.0f delivered/s\n",
		*subs, p, elapsed.Seconds(), float64(p)/elapsed.Seconds(), float64(d)/elapsed.Seconds())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "pubbench:", err)
	os.Exit(1)
}

var _ = strconv.Itoa
