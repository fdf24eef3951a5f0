package server_test

import (
	"bufio"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestFullSyncStreamed: a replica that takes EOF-marked payloads (REPLCONF
// capa eof) gets the snapshot as it is encoded, and a replica that does not
// read makes the master wait, not buffer the payload: its connection's
// output stays within a few MB while 24 MB wait to be sent. Read on, the
// payload is the dataset, and the stream follows it.
func TestFullSyncStreamed(t *testing.T) {
	srv := hotkvtest.Start(t)
	cl := hotkvtest.Dial(t, srv.Addr)
	cl.Do("CONFIG", "SET", "repl-diskless-sync-delay", "0")
	cl.Do("CONFIG", "SET", "rdbcompression", "no")
	want := map[int]map[string]string{0: {}}
	for i := range 24 {
		k, v := "big"+strconv.Itoa(i), strings.Repeat(string(rune('a'+i)), 1<<20)
		cl.Do("SET", k, v)
		want[0][k] = v
	}
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(64 << 10) // the kernel holds little of the payload
	}
	r := &replStream{t: t, c: c, br: bufio.NewReaderSize(c, 4096)}
	_, _ = c.Write(hotkvtest.EncodeCommand("REPLCONF", "capa", "eof"))
	if line, err := r.br.ReadString('\n'); err != nil || line != "+OK\r\n" {
		t.Fatalf("REPLCONF capa eof: %q %v", line, err)
	}
	_, _ = c.Write(hotkvtest.EncodeCommand("PSYNC", "?", "-1"))
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if line, err := r.br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+FULLRESYNC ") {
		t.Fatalf("PSYNC: %q %v", line, err)
	}
	head, err := r.br.ReadString('\n')
	if err != nil || !regexp.MustCompile(`^\$EOF:[0-9a-f]{40}\r\n$`).MatchString(head) {
		t.Fatalf("payload head %q %v (want an EOF mark)", head, err)
	}
	// the replica reads nothing for a while: the master's output for it
	// stays bounded (its window, decision 0055), far below the payload
	time.Sleep(500 * time.Millisecond)
	var most int64
	for range 10 {
		for _, line := range strings.Split(cl.Do("CLIENT", "LIST", "TYPE", "replica"), "\n") {
			if m := regexp.MustCompile(` tot-mem=(\d+)`).FindStringSubmatch(line); m != nil {
				n, _ := strconv.ParseInt(m[1], 10, 64)
				most = max(most, n)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if most == 0 || most > 2<<20 {
		t.Fatalf("a replica that does not read holds %d bytes of output on the master (payload: 24 MB)", most)
	}
	mark := strings.TrimSpace(strings.TrimPrefix(head, "$EOF:"))
	var got []byte
	buf := make([]byte, 64<<10)
	for !strings.HasSuffix(string(got[max(0, len(got)-40):]), mark) {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := r.br.Read(buf)
		if err != nil {
			t.Fatalf("payload after %d bytes: %v", len(got), err)
		}
		got = append(got, buf[:n]...)
	}
	checkRDB(t, got[:len(got)-40], want)
	cl.Do("SET", "after", "1")
	r.expect("SELECT 0", "SET after 1")
}
