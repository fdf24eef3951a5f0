package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// snapshotDir returns a directory holding a dump.rdb of n keys of 1000 bytes.
func snapshotDir(t *testing.T, n string) string {
	t.Helper()
	dir := t.TempDir()
	src := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir))
	c := hotkvtest.Dial(t, src.Addr)
	if r := c.Do("DEBUG", "POPULATE", n, "key", "1000"); r != "+OK\r\n" {
		t.Fatalf("DEBUG POPULATE: %q", r)
	}
	if r := c.Do("SAVE"); r != "+OK\r\n" {
		t.Fatalf("SAVE: %q", r)
	}
	return dir
}

// While the snapshot loads at start-up, clients are served as by Redis's
// processEventsWhileBlocked: a command not allowed while loading gets
// LOADING, INFO shows the progress, and once loaded every key is there.
func TestClientsServedWhileLoading(t *testing.T) {
	dir := snapshotDir(t, "1000")
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir), hotkvtest.WithConfig("key-load-delay", "250"),
		hotkvtest.WithConfig("loading-process-events-interval-bytes", "1024"))
	c := hotkvtest.Dial(t, srv.Addr)
	if r := c.Do("GET", "key:1"); r != "-LOADING Redis is loading the dataset in memory\r\n" {
		t.Fatalf("GET while loading: %q", r)
	}
	if r := c.Do("PING"); !strings.HasPrefix(r, "-LOADING") {
		t.Fatalf("PING while loading: %q", r)
	}
	info := c.Do("INFO", "persistence")
	for _, want := range []string{"loading:1\r\n", "loading_total_bytes:", "loading_loaded_perc:", "loading_eta_seconds:"} {
		if !strings.Contains(info, want) {
			t.Fatalf("INFO while loading lacks %q:\n%s", want, info)
		}
	}
	if r := c.Do("CLIENT", "SETNAME", "early"); r != "+OK\r\n" { // allowed while loading
		t.Fatalf("CLIENT SETNAME while loading: %q", r)
	}
	deadline := time.Now().Add(20 * time.Second)
	for strings.HasPrefix(c.Do("PING"), "-LOADING") {
		if time.Now().After(deadline) {
			t.Fatal("still loading after 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := c.Do("DBSIZE"); r != ":1000\r\n" {
		t.Fatalf("DBSIZE after loading: %q", r)
	}
	info = c.Do("INFO", "persistence")
	if !strings.Contains(info, "loading:0\r\n") || strings.Contains(info, "loading_total_bytes") ||
		!strings.Contains(info, "rdb_last_load_keys_loaded:1000\r\n") || !strings.Contains(c.Do("INFO", "errorstats"), "errorstat_LOADING:count=") {
		t.Fatalf("INFO after loading:\n%s", info)
	}
}

// SHUTDOWN while the snapshot loads stops the server without saving the half
// loaded dataset over the file, as Redis's prepareForShutdown.
func TestShutdownWhileLoadingDoesNotSave(t *testing.T) {
	dir := snapshotDir(t, "1000")
	file := filepath.Join(dir, "dump.rdb")
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir), hotkvtest.WithConfig("key-load-delay", "500"),
		hotkvtest.WithConfig("loading-process-events-interval-bytes", "1024"), hotkvtest.WithConfig("save", "3600 1"))
	c := hotkvtest.Dial(t, srv.Addr)
	if r := c.Do("GET", "key:1"); !strings.HasPrefix(r, "-LOADING") {
		t.Fatalf("not loading: %q", r)
	}
	c.Write(hotkvtest.EncodeCommand("SHUTDOWN", "SAVE"))
	if r, err := c.ReadReply(); err == nil {
		t.Fatalf("SHUTDOWN replied %q", r)
	}
	after, err := os.ReadFile(file)
	if err != nil || string(after) != string(before) {
		t.Fatalf("the snapshot changed (%d bytes, was %d): %v", len(after), len(before), err)
	}
}
