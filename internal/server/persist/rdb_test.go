package persist

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hotkv/hotkv/internal/clock"
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/rdb"
)

// libs is a function library registry for the tests.
type libs struct{ codes []string }

func (l *libs) Codes() []string { return l.codes }
func (l *libs) Load(code string, merge bool) error {
	l.codes = append(l.codes, code)
	return nil
}
func (l *libs) Flush() { l.codes = nil }

type fixture struct {
	r     *RDB
	cfg   *config.Config
	ks    *keyspace.Keyspace
	clk   *clock.Fake
	dirty int64
	fn    *libs
	mu    sync.Mutex // the engine lock of the BGSAVE's steps
}

func newFixture(t *testing.T, dir string, pairs ...[2]string) *fixture {
	t.Helper()
	f := &fixture{cfg: config.New(), ks: keyspace.New(16, 1), clk: clock.NewFake(1_700_000_000_000), fn: &libs{}}
	args := []string{"--dir", dir}
	for _, p := range pairs {
		args = append(args, "--"+p[0], p[1])
	}
	if _, err := f.cfg.ParseArgs(args); err != nil {
		t.Fatal(err)
	}
	f.ks.SetNow(f.clk.NowMs())
	f.r = New(Deps{Config: f.cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Clock: f.clk,
		KS: f.ks, Functions: f.fn, Dirty: &f.dirty, RunSnapshot: f.runSnapshot}, f.clk.NowUs()/1e6)
	return f
}

// runSnapshot is the server's, without the pacing: each step under f.mu.
func (f *fixture) runSnapshot(s *rdb.Stream, w io.Writer, maxKeys int, pause func(int) bool) error {
	for {
		f.mu.Lock()
		before := s.Keys()
		chunk, done, err := s.Step(max(maxKeys, 1))
		keys := s.Keys() - before
		f.mu.Unlock()
		if err != nil {
			return err
		}
		if _, err := w.Write(chunk); err != nil || done {
			return err
		}
		if pause != nil && !pause(keys) {
			return errKilled
		}
	}
}

func (f *fixture) info() string {
	return string(f.r.AppendInfo(nil, func(b []byte) []byte { return b }))
}

func field(t *testing.T, info, name string) string {
	t.Helper()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	t.Fatalf("no %s in %q", name, info)
	return ""
}

// TestSaveAndReload: SAVE writes dir/dbfilename with the keys and the
// libraries, resets the change counter and moves LASTSAVE; DEBUG RELOAD
// empties both and loads them back.
func TestSaveAndReload(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.ks.DBs[0].SetString([]byte("k"), []byte("v"), false)
	f.ks.DBs[5].SetString([]byte("other"), []byte("x"), false)
	f.fn.codes = []string{"#!lua name=lib\nredis.register_function('f', function() return 1 end)"}
	f.dirty = 7
	f.clk.Advance(3 * time.Second)
	if errText := f.r.Save(); errText != "" {
		t.Fatalf("SAVE: %q", errText)
	}
	if f.dirty != 0 || f.r.LastSave() != f.clk.NowMs()/1000 {
		t.Fatalf("after SAVE: dirty %d, LASTSAVE %d", f.dirty, f.r.LastSave())
	}
	if _, err := os.Stat(filepath.Join(f.cfg.String("dir"), "dump.rdb")); err != nil {
		t.Fatal(err)
	}
	if errText := f.r.DebugReload(false, true, false); errText != "" {
		t.Fatalf("DEBUG RELOAD: %q", errText)
	}
	if e := f.ks.DBs[5].Lookup([]byte("other")); e == nil || f.ks.DBs[0].Len() != 1 {
		t.Fatalf("reloaded: db0 %d keys, db5 other %v", f.ks.DBs[0].Len(), e)
	}
	if len(f.fn.codes) != 1 || !strings.Contains(f.fn.codes[0], "name=lib") {
		t.Fatalf("libraries reloaded: %q", f.fn.codes)
	}
	if got := field(t, f.info(), "rdb_last_load_keys_loaded"); got != "2" {
		t.Fatalf("rdb_last_load_keys_loaded %s", got)
	}
}

// TestBGSaveAndCron: BGSAVE runs in the background, a second one is refused
// while it does, the cron collects it (the changes made meanwhile stay
// counted); a save point starts one; a failed one denies writes while save
// points are set and stop-writes-on-bgsave-error is yes.
func TestBGSaveAndCron(t *testing.T) {
	f := newFixture(t, t.TempDir(), [2]string{"save", "10 2"})
	f.ks.DBs[0].SetString([]byte("k"), []byte("v"), false)
	f.dirty = 3
	f.r.SetBGSaveDelay(50 * time.Millisecond)
	if status, errText := f.r.BGSave(false, false); status != "Background saving started" || errText != "" {
		t.Fatalf("BGSAVE: %q %q", status, errText)
	}
	if _, errText := f.r.BGSave(false, false); errText != errBGInProgress {
		t.Fatalf("second BGSAVE: %q", errText)
	}
	if got := field(t, f.info(), "rdb_bgsave_in_progress"); got != "1" {
		t.Fatalf("rdb_bgsave_in_progress %s", got)
	}
	f.dirty += 2 // written while the BGSAVE ran
	for deadline := time.Now().Add(5 * time.Second); f.r.bg != nil; {
		if time.Now().After(deadline) {
			t.Fatal("the BGSAVE did not finish")
		}
		time.Sleep(5 * time.Millisecond)
		f.r.Cron()
	}
	if f.dirty != 2 || field(t, f.info(), "rdb_last_bgsave_status") != "ok" {
		t.Fatalf("after BGSAVE: dirty %d, %s", f.dirty, f.info())
	}

	// the save point "10 2": 2 changes and more than 10 s since the last save
	f.r.SetBGSaveDelay(0)
	f.r.Cron()
	if f.r.bg != nil {
		t.Fatal("a save point fired before its seconds passed")
	}
	f.clk.Advance(11 * time.Second)
	// the directory goes away: the background save fails
	if err := os.RemoveAll(f.cfg.String("dir")); err != nil {
		t.Fatal(err)
	}
	f.r.Cron()
	if f.r.bg == nil {
		t.Fatal("the save point did not start a BGSAVE")
	}
	for deadline := time.Now().Add(5 * time.Second); f.r.bg != nil; f.r.Cron() {
		if time.Now().After(deadline) {
			t.Fatal("the BGSAVE did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !f.r.WritesDenied() || field(t, f.info(), "rdb_last_bgsave_status") != "err" ||
		field(t, f.info(), "rdb_saves_consecutive_failures") != "1" {
		t.Fatalf("after a failed BGSAVE: WritesDenied %v, %s", f.r.WritesDenied(), f.info())
	}
	f.r.ResetStats() // CONFIG RESETSTAT
	if field(t, f.info(), "rdb_saves_consecutive_failures") != "0" || field(t, f.info(), "rdb_saves") != "0" {
		t.Fatalf("after RESETSTAT: %s", f.info())
	}
	if err := f.cfg.Set([2]string{"stop-writes-on-bgsave-error", "no"}); err != nil {
		t.Fatal(err)
	}
	if f.r.WritesDenied() {
		t.Fatal("writes denied with stop-writes-on-bgsave-error no")
	}
}

// TestFinishShutdown: with save points a shutdown saves unless NOSAVE; a
// failed save stops it unless FORCE.
func TestFinishShutdown(t *testing.T) {
	f := newFixture(t, t.TempDir(), [2]string{"save", "3600 1"})
	path := f.r.Path()
	if err := f.r.FinishShutdown(command.ShutdownFlags{NoSave: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("NOSAVE saved: %v", err)
	}
	if err := f.r.FinishShutdown(command.ShutdownFlags{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no save at shutdown: %v", err)
	}
	if err := os.RemoveAll(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	if err := f.r.FinishShutdown(command.ShutdownFlags{}); err == nil {
		t.Fatal("a failed save did not stop the shutdown")
	}
	if err := f.r.FinishShutdown(command.ShutdownFlags{Force: true}); err != nil {
		t.Fatalf("FORCE: %v", err)
	}
}
