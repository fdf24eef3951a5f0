package cli

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// latencyMode is --latency and --latency-history: PING in a loop, min, max
// and average round trip in milliseconds (redis-cli's latencyMode). On a
// terminal it refreshes one line forever; otherwise it samples for the
// interval (-i, 1 second by default), prints one line and exits.
func (s *session) latencyMode() error {
	const sampleRate = 10 * time.Millisecond
	interval := s.cfg.Interval
	historyInterval := 15 * time.Second
	if interval > 0 {
		historyInterval = interval
	} else {
		interval = time.Second
	}
	var min, max, tot, count int64
	var avg float64
	historyStart := time.Now()
	print := func() {
		switch s.cfg.Output {
		case OutputStandard:
			fmt.Fprintf(s.out, "min: %d, max: %d, avg: %.2f (%d samples)", min, max, avg, count)
		case OutputCSV:
			fmt.Fprintf(s.out, "%d,%d,%.2f,%d\n", min, max, avg, count)
		default:
			fmt.Fprintf(s.out, "%d %d %.2f %d\n", min, max, avg, count)
		}
		s.out.Flush()
	}
	for {
		start := time.Now()
		if _, err := s.reconnectingDo("PING"); err != nil {
			s.errf("\nI/O error\n")
			return &errExit{1}
		}
		latency := time.Now().UnixMilli() - start.UnixMilli()
		count++
		if count == 1 {
			min, max, tot = latency, latency, latency
			avg = float64(latency)
		} else {
			min, max = minInt(min, latency), maxInt(max, latency)
			tot += latency
			avg = float64(tot) / float64(count)
		}
		if s.cfg.Output == OutputStandard {
			s.out.WriteString("\x1b[0G\x1b[2K")
			print()
		} else if s.cfg.LatencyHistory {
			print()
		} else if time.Since(historyStart) > interval {
			print()
			return nil
		}
		if s.cfg.LatencyHistory && time.Since(historyStart) > historyInterval {
			fmt.Fprintf(s.out, " -- %.2f seconds range\n", time.Since(historyStart).Seconds())
			s.out.Flush()
			historyStart = time.Now()
			min, max, tot, count = 0, 0, 0, 0
		}
		time.Sleep(sampleRate)
	}
}

func minInt(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

func maxInt(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// reconnectingDo runs a command, reconnecting (and saying so) while the
// server is away.
func (s *session) reconnectingDo(args ...string) (*Reply, error) {
	tries := 0
	for {
		c := s.getConn()
		if c != nil && c.Err == nil {
			r, err := c.Do(args...)
			if err == nil {
				if tries > 0 {
					s.out.WriteString("\r\x1b[0K")
				}
				return r, nil
			}
		}
		tries++
		fmt.Fprintf(s.out, "\r\x1b[0KReconnecting... %d\r", tries)
		s.out.Flush()
		if err := s.connect(true, true); err != nil {
			time.Sleep(time.Second)
		}
	}
}

// scanMode is --scan [--pattern p] [--count n]: every key, one a line, quoted
// on a terminal (redis-cli's scanMode).
func (s *session) scanMode() error {
	cursor := "0"
	for {
		args := []string{"SCAN", cursor}
		if s.cfg.Pattern != "" {
			args = append(args, "MATCH", s.cfg.Pattern, "COUNT", strconv.Itoa(s.cfg.Count))
		} else if s.cfg.CountSet {
			args = append(args, "COUNT", strconv.Itoa(s.cfg.Count))
		}
		r, err := s.getConn().Do(args...)
		switch {
		case err != nil:
			s.errf("\nI/O error\n")
			return &errExit{1}
		case r.Kind == KindError:
			s.errf("SCAN error: %s\n", r.Str)
			return &errExit{1}
		case r.Kind != KindArray:
			s.errf("Non ARRAY response from SCAN!\n")
			return &errExit{1}
		case len(r.Elems) != 2:
			s.errf("Invalid element count from SCAN!\n")
			return &errExit{1}
		}
		cursor = string(r.Elems[0].Str)
		for _, k := range r.Elems[1].Elems {
			if s.cfg.Output == OutputStandard {
				s.out.Write(Repr(nil, k.Str))
			} else {
				s.out.Write(cstr(k.Str))
			}
			s.out.WriteByte('\n')
		}
		s.out.Flush()
		if s.cfg.Interval > 0 {
			time.Sleep(s.cfg.Interval)
		}
		if n, _ := strconv.ParseUint(cursor, 10, 64); n == 0 {
			return nil
		}
	}
}

// pipeMode is --pipe: stdin (RESP, or inline commands) goes to the server
// as is while replies are counted; errors are printed to stderr. A final
// ECHO of 20 random bytes tells when the last reply came (redis-cli's
// pipeMode, with its summary lines).
func (s *session) pipeMode() error {
	c := s.getConn()
	var magic [20]byte
	if _, err := rand.Read(magic[:]); err != nil {
		return err
	}
	var (
		mu       sync.Mutex // orders stdout lines between the two goroutines
		eof      atomic.Bool
		lastRead atomic.Int64
		writeErr = make(chan error, 1)
	)
	lastRead.Store(time.Now().UnixNano())
	errf := func(format string, a ...any) {
		mu.Lock()
		s.errf(format, a...)
		mu.Unlock()
	}
	go func() {
		buf := make([]byte, 16<<10)
		for {
			n, err := s.env.Stdin.Read(buf)
			if n > 0 {
				if _, werr := c.nc.Write(buf[:n]); werr != nil {
					writeErr <- fmt.Errorf("Error writing to the server: %v", ioError(werr))
					return
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				writeErr <- fmt.Errorf("Error reading from stdin: %v", err)
				return
			}
		}
		// The ECHO starts with CRLF so that garbage before it cannot swallow it.
		echo := append([]byte("\r\n*2\r\n$4\r\nECHO\r\n$20\r\n"), magic[:]...)
		echo = append(echo, "\r\n"...)
		mu.Lock()
		s.out.WriteString("All data transferred. Waiting for the last reply...\n")
		s.out.Flush()
		mu.Unlock()
		eof.Store(true)
		lastRead.Store(time.Now().UnixNano())
		if _, werr := c.nc.Write(echo); werr != nil {
			writeErr <- fmt.Errorf("Error writing to the server: %v", ioError(werr))
		}
	}()

	var errors, replies int64
	type result struct {
		r   *Reply
		err error
	}
	results := make(chan result, 256)
	go func() {
		for {
			r, err := ReadReply(c.br)
			results <- result{r, err}
			if err != nil {
				return
			}
		}
	}()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case res := <-results:
			if res.err != nil {
				errf("Error reading replies from server\n")
				return &errExit{1}
			}
			lastRead.Store(time.Now().UnixNano())
			r := res.r
			if r.Kind == KindError {
				errf("%s\n", r.Str)
				errors++
			} else if eof.Load() && r.Kind == KindString && len(r.Str) == 20 && bytes.Equal(r.Str, magic[:]) {
				mu.Lock()
				s.out.WriteString("Last reply received from server.\n")
				s.out.Flush()
				mu.Unlock()
				done = true
				replies--
			}
			replies++
		case err := <-writeErr:
			errf("%v\n", err)
			return &errExit{1}
		case <-tick.C:
			if eof.Load() && s.cfg.PipeTimeout > 0 &&
				time.Since(time.Unix(0, lastRead.Load())) > s.cfg.PipeTimeout {
				errf("No replies for %d seconds: exiting.\n", int(s.cfg.PipeTimeout/time.Second))
				errors++
				done = true
			}
		}
	}
	mu.Lock()
	fmt.Fprintf(s.out, "errors: %d, replies: %d\n", errors, replies)
	s.out.Flush()
	mu.Unlock()
	if errors > 0 {
		return &errExit{1}
	}
	return nil
}
