package logging

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestRedisLineFormat(t *testing.T) {
	var buf bytes.Buffer
	lv := new(slog.LevelVar)
	lv.Set(Level("verbose"))
	l, err := New(&buf, FormatRedis, lv)
	if err != nil {
		t.Fatal(err)
	}
	l.Debug("hidden")
	l.Log(context.Background(), LevelVerbose, "verbose line")
	l.Info("Server initialized")
	l.Warn("careful", "client", "127.0.0.1:5000", "why", "two words")
	l.With("id", 7).WithGroup("g").Info("grouped", "k", 1)
	SetReplica(l, true)
	l.Info("as a replica")
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	pid := fmt.Sprint(os.Getpid())
	want := []string{
		pid + ":M <date> - verbose line",
		pid + ":M <date> * Server initialized",
		pid + `:M <date> # careful client=127.0.0.1:5000 why="two words"`,
		pid + ":M <date> * grouped id=7 g.k=1",
		pid + ":S <date> * as a replica",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	date := regexp.MustCompile(`^(\d+:[MS]) \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d\.\d{3} `)
	for i, line := range lines {
		got := date.ReplaceAllString(line, "$1 <date> ")
		if got != want[i] {
			t.Errorf("line %d = %q, want %q", i, line, want[i])
		}
	}
}

func TestLevels(t *testing.T) {
	for name, want := range map[string]string{
		"debug": ".-*#", "verbose": "-*#", "notice": "*#", "warning": "#", "nothing": "",
	} {
		var buf bytes.Buffer
		l, _ := New(&buf, FormatRedis, Level(name))
		l.Debug("x")
		l.Log(context.Background(), LevelVerbose, "x")
		l.Info("x")
		l.Warn("x")
		got := ""
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			if f := strings.Fields(line); len(f) > 5 {
				got += f[5]
			}
		}
		if got != want {
			t.Errorf("loglevel %s: levels %q, want %q", name, got, want)
		}
	}
}

func TestRawOnlyInRedisFormat(t *testing.T) {
	var a, b bytes.Buffer
	la, _ := New(&a, FormatRedis, slog.LevelInfo)
	lb, _ := New(&b, FormatSlog, slog.LevelInfo)
	Raw(la, "logo\n")
	Raw(lb, "logo\n")
	if a.String() != "logo\n" || b.Len() != 0 {
		t.Fatalf("redis %q, slog %q", a.String(), b.String())
	}
	if _, err := New(&a, "json", slog.LevelInfo); err == nil {
		t.Fatal("unknown format accepted")
	}
}
