package server_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// RDB snapshots over TCP (persist.go): SAVE and restart, BGSAVE's
// point-in-time file, the in-progress errors, save points, SHUTDOWN's save
// rules. Error texts checked against redis-server 7.0.

const t0 = 1795936774000 // fake clock start (Unix ms)

// infoField reads one INFO persistence field.
func infoField(t *testing.T, c *hotkvtest.Conn, name string) string {
	t.Helper()
	r := c.Do("INFO", "persistence")
	m := regexp.MustCompile(`(?m)^` + name + `:(.*)\r$`).FindStringSubmatch(r)
	if m == nil {
		t.Fatalf("no %s in %q", name, r)
	}
	return m[1]
}

// waitField polls INFO persistence until name has value want.
func waitField(t *testing.T, c *hotkvtest.Conn, name, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := infoField(t, c, name)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %s, want %s", name, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func do(t *testing.T, c *hotkvtest.Conn, want string, args ...string) {
	t.Helper()
	if got := c.Do(args...); got != want {
		t.Fatalf("%v: got %q, want %q", args, got, want)
	}
}

// closed reports whether the server closed c (SHUTDOWN replies nothing).
func closed(c *hotkvtest.Conn) bool {
	_, err := c.ReadReply()
	return err != nil
}

func TestSaveThenRestartKeepsEveryType(t *testing.T) {
	dir := t.TempDir()
	a := hotkvtest.Start(t, hotkvtest.WithFakeClock(t0), hotkvtest.WithConfig("dir", dir))
	c := hotkvtest.Dial(t, a.Addr)
	do(t, c, "+OK\r\n", "SET", "str", "v")
	do(t, c, "+OK\r\n", "SET", "ttl", "v", "PX", "100000")
	do(t, c, "+OK\r\n", "SET", "soon", "v", "PX", "5000") // expired at the restart
	do(t, c, ":3\r\n", "RPUSH", "list", "a", "b", "c")
	do(t, c, ":2\r\n", "HSET", "hash", "f", "1", "g", "2")
	do(t, c, ":3\r\n", "SADD", "set", "1", "2", "3")
	do(t, c, ":2\r\n", "ZADD", "zset", "1.5", "a", "2", "b")
	do(t, c, ":1\r\n", "PFADD", "hll", "x")
	do(t, c, "+OK\r\n", "SELECT", "3")
	do(t, c, "+OK\r\n", "SET", "db3", "x")
	lib := "#!lua name=mylib\nredis.register_function('f', function() return 7 end)"
	do(t, c, "$5\r\nmylib\r\n", "FUNCTION", "LOAD", lib)
	do(t, c, "+OK\r\n", "SAVE")
	if infoField(t, c, "rdb_changes_since_last_save") != "0" || infoField(t, c, "rdb_saves") != "1" {
		t.Fatal("SAVE did not reset the change counter or count itself")
	}
	do(t, c, ":1795936774\r\n", "LASTSAVE")

	b := hotkvtest.Start(t, hotkvtest.WithFakeClock(t0+10_000), hotkvtest.WithConfig("dir", dir))
	d := hotkvtest.Dial(t, b.Addr)
	// loading does not count as changes
	if got := infoField(t, d, "rdb_changes_since_last_save"); got != "0" {
		t.Fatalf("changes after load %s", got)
	}
	do(t, d, "$1\r\nv\r\n", "GET", "str")
	do(t, d, ":90000\r\n", "PTTL", "ttl")
	do(t, d, ":0\r\n", "EXISTS", "soon")
	do(t, d, "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", "LRANGE", "list", "0", "-1")
	do(t, d, "$1\r\n2\r\n", "HGET", "hash", "g")
	do(t, d, ":3\r\n", "SCARD", "set")
	do(t, d, "$3\r\n1.5\r\n", "ZSCORE", "zset", "a")
	do(t, d, ":1\r\n", "PFCOUNT", "hll") // caches the cardinality: one change, as in Redis
	do(t, d, ":7\r\n", "FCALL", "f", "0")
	do(t, d, ":7\r\n", "DBSIZE")
	do(t, d, "+OK\r\n", "SELECT", "3")
	do(t, d, "$1\r\nx\r\n", "GET", "db3")
	if got := infoField(t, d, "rdb_last_load_keys_loaded"); got != "8" {
		t.Fatalf("keys loaded %s", got)
	}
	if got := infoField(t, d, "rdb_last_load_keys_expired"); got != "1" {
		t.Fatalf("keys expired %s", got)
	}
}

func TestBGSaveIsPointInTime(t *testing.T) {
	dir := t.TempDir()
	a := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir))
	c := hotkvtest.Dial(t, a.Addr)
	do(t, c, "+OK\r\n", "SET", "k", "before")
	do(t, c, "+OK\r\n", "SET", "other", "x")
	a.Srv.SetBGSaveDelay(time.Second)
	do(t, c, "+Background saving started\r\n", "BGSAVE")
	// writes go on while the file is written; they are not in it
	do(t, c, "+OK\r\n", "SET", "k", "after")
	do(t, c, "+OK\r\n", "SET", "new", "1")
	do(t, c, ":1\r\n", "DEL", "other")
	do(t, c, "-ERR Background save already in progress\r\n", "BGSAVE")
	do(t, c, "-ERR Background save already in progress\r\n", "BGSAVE", "SCHEDULE")
	do(t, c, "-ERR Background save already in progress\r\n", "SAVE")
	if infoField(t, c, "rdb_bgsave_in_progress") != "1" || infoField(t, c, "rdb_current_bgsave_time_sec") == "-1" {
		t.Fatal("INFO does not show the BGSAVE in progress")
	}
	waitField(t, c, "rdb_bgsave_in_progress", "0")
	if got := infoField(t, c, "rdb_changes_since_last_save"); got != "3" {
		t.Fatalf("changes since the BGSAVE: %s, want the 3 made after its start", got)
	}
	if infoField(t, c, "rdb_last_bgsave_status") != "ok" || infoField(t, c, "rdb_last_bgsave_time_sec") == "-1" ||
		infoField(t, c, "rdb_current_bgsave_time_sec") != "-1" || infoField(t, c, "rdb_saves") != "1" {
		t.Fatalf("INFO after the BGSAVE: %q", c.Do("INFO", "persistence"))
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "temp-*.rdb")); len(m) != 0 {
		t.Fatalf("temporary files left: %v", m)
	}
	b := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir))
	d := hotkvtest.Dial(t, b.Addr)
	do(t, d, "$6\r\nbefore\r\n", "GET", "k")
	do(t, d, "$1\r\nx\r\n", "GET", "other")
	do(t, d, ":0\r\n", "EXISTS", "new")
}

func TestBGSaveInsideExecIsScheduled(t *testing.T) {
	dir := t.TempDir()
	a := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir))
	c := hotkvtest.Dial(t, a.Addr)
	do(t, c, "+OK\r\n", "SET", "k", "v")
	do(t, c, "+OK\r\n", "MULTI")
	do(t, c, "+QUEUED\r\n", "BGSAVE")
	do(t, c, "*1\r\n+Background saving scheduled\r\n", "EXEC")
	waitField(t, c, "rdb_saves", "1") // the cron starts it
	waitField(t, c, "rdb_bgsave_in_progress", "0")
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatal(err)
	}
	// SCHEDULE with nothing else running starts at once (no AOF child to wait for)
	do(t, c, "+Background saving started\r\n", "BGSAVE", "SCHEDULE")
}

func TestSavePointsFire(t *testing.T) {
	dir := t.TempDir()
	a := hotkvtest.Start(t, hotkvtest.WithFakeClock(t0), hotkvtest.WithConfig("dir", dir),
		hotkvtest.WithConfig("save", "10 3 100 1"))
	c := hotkvtest.Dial(t, a.Addr)
	do(t, c, "+OK\r\n", "SET", "a", "1")
	do(t, c, "+OK\r\n", "SET", "b", "1")
	a.Clock.Advance(11 * time.Second) // 2 changes < 3: "10 3" does not fire
	time.Sleep(300 * time.Millisecond)
	if got := infoField(t, c, "rdb_saves"); got != "0" {
		t.Fatalf("a save point fired early: rdb_saves %s", got)
	}
	do(t, c, "+OK\r\n", "SET", "c", "1") // 3 changes, 11 s > 10 s
	waitField(t, c, "rdb_saves", "1")
	waitField(t, c, "rdb_bgsave_in_progress", "0")
	waitField(t, c, "rdb_changes_since_last_save", "0")
	do(t, c, ":1795936785\r\n", "LASTSAVE")
	// exactly 10 s later is not "more than 10 s"
	do(t, c, "+OK\r\n", "MSET", "a", "2", "b", "2", "c", "2")
	a.Clock.Advance(10 * time.Second)
	time.Sleep(300 * time.Millisecond)
	if got := infoField(t, c, "rdb_saves"); got != "1" {
		t.Fatalf("fired at exactly the interval: rdb_saves %s", got)
	}
	a.Clock.Advance(time.Second)
	waitField(t, c, "rdb_saves", "2")
}

func TestFailedBGSaveRetriesAfterDelay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a := hotkvtest.Start(t, hotkvtest.WithFakeClock(t0), hotkvtest.WithConfig("dir", dir),
		hotkvtest.WithConfig("save", "1 1"))
	c := hotkvtest.Dial(t, a.Addr)
	if err := os.RemoveAll(dir); err != nil { // every save fails now
		t.Fatal(err)
	}
	do(t, c, "-ERR\r\n", "SAVE")
	do(t, c, "+OK\r\n", "SET", "a", "1")
	a.Clock.Advance(2 * time.Second)
	waitField(t, c, "rdb_last_bgsave_status", "err")
	if got := infoField(t, c, "rdb_saves"); got != "2" { // SAVE + one BGSAVE
		t.Fatalf("rdb_saves %s", got)
	}
	// stop-writes-on-bgsave-error: writes and PING refused, reads served
	misconf := "-" + "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. " +
		"Commands that may modify the data set are disabled, because this instance is configured to report errors " +
		"during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs " +
		"for details about the RDB error."
	do(t, c, misconf+"\r\n", "SET", "b", "1")
	do(t, c, misconf+"\r\n", "PING")
	do(t, c, "$1\r\n1\r\n", "GET", "a")
	do(t, c, ":1\r\n", "EVAL", "return 1", "0")
	if r := c.Do("EVAL", "return redis.call('set','x','y')", "0"); !strings.HasPrefix(r, misconf+" script: ") {
		t.Fatalf("write in a script: %q", r)
	}
	do(t, c, "+OK\r\n", "MULTI")
	do(t, c, misconf+"\r\n", "SET", "b", "1")
	do(t, c, "-EXECABORT Transaction discarded because of previous errors.\r\n", "EXEC")
	do(t, c, "+OK\r\n", "CONFIG", "SET", "stop-writes-on-bgsave-error", "no")
	do(t, c, "+PONG\r\n", "PING")
	do(t, c, "+OK\r\n", "CONFIG", "SET", "stop-writes-on-bgsave-error", "yes")
	// no retry within CONFIG_BGSAVE_RETRY_DELAY (5 s) of the failed attempt
	a.Clock.Advance(4 * time.Second)
	time.Sleep(300 * time.Millisecond)
	if got := infoField(t, c, "rdb_saves"); got != "2" {
		t.Fatalf("retried within the delay: rdb_saves %s", got)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a.Clock.Advance(2 * time.Second)
	waitField(t, c, "rdb_saves", "3")
	waitField(t, c, "rdb_last_bgsave_status", "ok")
	waitField(t, c, "rdb_changes_since_last_save", "0")
	do(t, c, "+OK\r\n", "SET", "b", "1") // writes accepted again
}

func TestShutdownSaveRules(t *testing.T) {
	fileIn := func(dir string) bool {
		_, err := os.Stat(filepath.Join(dir, "dump.rdb"))
		return err == nil
	}
	cases := []struct {
		name, save string
		args       []string
		wantFile   bool
	}{
		{"no save points", "", []string{"SHUTDOWN"}, false},
		{"SAVE without save points", "", []string{"SHUTDOWN", "SAVE"}, true},
		{"save points", "3600 1", []string{"SHUTDOWN"}, true},
		{"NOSAVE with save points", "3600 1", []string{"SHUTDOWN", "NOSAVE", "NOW"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			a := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir), hotkvtest.WithConfig("save", tc.save))
			c := hotkvtest.Dial(t, a.Addr)
			do(t, c, "+OK\r\n", "SET", "k", "v")
			c.Write(hotkvtest.EncodeCommand(tc.args...))
			if !closed(c) {
				t.Fatal("SHUTDOWN replied instead of closing the connection")
			}
			if fileIn(dir) != tc.wantFile {
				t.Fatalf("dump.rdb exists: %v, want %v", fileIn(dir), tc.wantFile)
			}
		})
	}
}

func TestShutdownRefusedWhenTheSaveFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	a := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir), hotkvtest.WithConfig("save", "3600 1"))
	c := hotkvtest.Dial(t, a.Addr)
	a.Srv.SetBGSaveDelay(time.Hour)
	do(t, c, "+Background saving started\r\n", "BGSAVE")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	do(t, c, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n", "SHUTDOWN")
	do(t, c, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n", "SHUTDOWN", "SAVE")
	do(t, c, "+PONG\r\n", "PING")
	// the BGSAVE was killed by the first attempt, as Redis kills its child
	if got := infoField(t, c, "rdb_bgsave_in_progress"); got != "0" {
		t.Fatalf("rdb_bgsave_in_progress %s", got)
	}
	// NOSAVE skips the save; FORCE exits despite it
	c.Write(hotkvtest.EncodeCommand("SHUTDOWN", "FORCE"))
	if !closed(c) {
		t.Fatal("SHUTDOWN FORCE did not stop the server")
	}
}

func TestFlushAllWithSavePointsSaves(t *testing.T) {
	dir := t.TempDir()
	a := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir), hotkvtest.WithConfig("save", "3600 1"))
	c := hotkvtest.Dial(t, a.Addr)
	do(t, c, "+OK\r\n", "MSET", "a", "1", "b", "2")
	a.Srv.SetBGSaveDelay(time.Hour)
	do(t, c, "+Background saving started\r\n", "BGSAVE")
	do(t, c, "+OK\r\n", "FLUSHALL")
	// the BGSAVE was killed, the empty dataset saved, FLUSHALL counted as one change
	if infoField(t, c, "rdb_bgsave_in_progress") != "0" || infoField(t, c, "rdb_changes_since_last_save") != "1" {
		t.Fatalf("after FLUSHALL: %q", c.Do("INFO", "persistence"))
	}
	b := hotkvtest.Start(t, hotkvtest.WithConfig("dir", dir))
	do(t, hotkvtest.Dial(t, b.Addr), ":0\r\n", "DBSIZE")
}

// The test suite's hidden delays are honoured: key-load-delay after each key
// loaded (DEBUG RELOAD), rdb-key-save-delay after each key saved (SAVE) and
// as the time a BGSAVE takes; CONFIG GET * does not list them, CONFIG GET of
// their names does.
func TestKeyDelays(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("dir", t.TempDir()), hotkvtest.WithConfig("enable-debug-command", "yes"))
	c := hotkvtest.Dial(t, srv.Addr)
	for i := range 10 {
		c.Do("SET", "k"+string(rune('a'+i)), "v")
	}
	if all := c.Do("CONFIG", "GET", "*"); strings.Contains(all, "key-load-delay") {
		t.Fatal("CONFIG GET * lists the hidden key-load-delay")
	}
	do(t, c, "*2\r\n$14\r\nkey-load-delay\r\n$1\r\n0\r\n", "CONFIG", "GET", "key-load-delay")
	timed := func(args ...string) time.Duration {
		start := time.Now()
		do(t, c, "+OK\r\n", args...)
		return time.Since(start)
	}
	if d := timed("DEBUG", "RELOAD"); d > 150*time.Millisecond {
		t.Fatalf("DEBUG RELOAD without delays took %v", d)
	}
	do(t, c, "+OK\r\n", "CONFIG", "SET", "key-load-delay", "20000")
	if d := timed("DEBUG", "RELOAD"); d < 200*time.Millisecond {
		t.Fatalf("DEBUG RELOAD of 10 keys with key-load-delay 20 ms took %v", d)
	}
	do(t, c, "+OK\r\n", "CONFIG", "SET", "key-load-delay", "0")
	do(t, c, "+OK\r\n", "CONFIG", "SET", "rdb-key-save-delay", "20000")
	if d := timed("SAVE"); d < 200*time.Millisecond {
		t.Fatalf("SAVE of 10 keys with rdb-key-save-delay 20 ms took %v", d)
	}
	do(t, c, "+Background saving started\r\n", "BGSAVE")
	time.Sleep(50 * time.Millisecond)
	if got := infoField(t, c, "rdb_bgsave_in_progress"); got != "1" {
		t.Fatalf("BGSAVE with 200 ms of delays done after 50 ms (rdb_bgsave_in_progress %s)", got)
	}
	waitField(t, c, "rdb_bgsave_in_progress", "0")
}

// A master restarted from its snapshot continues its history (the RDB's
// repl-id and repl-offset as replid2) and deletes in it the keys that
// expired while it was down: PSYNC <old id> <offset+1> continues with a
// SELECT and a DEL for each (Redis's RDBFLAGS_FEED_REPL), so a replica that
// continues loses them too.
func TestRestartedMasterDeletesExpiredKeysInItsHistory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := hotkvtest.Start(t, hotkvtest.WithFakeClock(t0), hotkvtest.WithConfig("dir", dir))
	r := hotkvtest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: r.Addr})
	defer rc.Close()
	host, port, _ := net.SplitHostPort(a.Addr)
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(rc.Info(ctx, "replication").Val(), "master_link_status:up") {
		time.Sleep(10 * time.Millisecond)
	}
	c := hotkvtest.Dial(t, a.Addr)
	do(t, c, "+OK\r\n", "SET", "keep", "v")
	do(t, c, "+OK\r\n", "SET", "soon", "v", "PX", "5000")
	do(t, c, "+OK\r\n", "SELECT", "5")
	do(t, c, "+OK\r\n", "SET", "soon5", "v", "PX", "5000")
	do(t, c, "+OK\r\n", "SAVE")
	info := c.Do("INFO", "replication")
	id := regexp.MustCompile(`master_replid:(\w+)`).FindStringSubmatch(info)[1]
	off, _ := strconv.ParseInt(regexp.MustCompile(`master_repl_offset:(\d+)`).FindStringSubmatch(info)[1], 10, 64)

	b := hotkvtest.Start(t, hotkvtest.WithFakeClock(t0+10_000), hotkvtest.WithConfig("dir", dir))
	d := hotkvtest.Dial(t, b.Addr)
	want := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*2\r\n$3\r\nDEL\r\n$4\r\nsoon\r\n" +
		"*2\r\n$6\r\nSELECT\r\n$1\r\n5\r\n*2\r\n$3\r\nDEL\r\n$5\r\nsoon5\r\n"
	info = d.Do("INFO", "replication")
	if !strings.Contains(info, "master_replid2:"+id) || !strings.Contains(info, "master_repl_offset:"+strconv.FormatInt(off+int64(len(want)), 10)) {
		t.Fatalf("after the restart (history %s up to %d, %d bytes of DELs):\n%s", id, off, len(want), info)
	}
	d.Write([]byte("REPLCONF capa psync2\r\n"))
	if r, _ := d.ReadReply(); r != "+OK\r\n" {
		t.Fatalf("REPLCONF: %q", r)
	}
	d.Write([]byte("PSYNC " + id + " " + strconv.FormatInt(off+1, 10) + "\r\n"))
	buf := make([]byte, 0, 512)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(string(buf), "soon5\r\n") && time.Now().Before(deadline) {
		_ = d.Net().SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		var p [512]byte
		n, _ := d.Net().Read(p[:])
		buf = append(buf, p[:n]...)
	}
	if got := string(buf); !strings.HasPrefix(got, "+CONTINUE ") || !strings.HasSuffix(got, want) {
		t.Fatalf("PSYNC of the old history: %q, want +CONTINUE then %q", got, want)
	}
}
