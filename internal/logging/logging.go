// Package logging writes the server's log in one of two formats: Redis's
// (the default), whose lines Redis's tools and test harness read, or slog's
// key=value text.
//
// A Redis line is
//
//	<pid>:<role> <dd Mon yyyy HH:MM:SS.mmm> <level> <message>[ key=value...]
//
// role is M (a primary) or S (a replica); level is '.' (debug), '-'
// (verbose), '*' (notice) or '#' (warning), as Redis's serverLogRaw writes
// them. Attributes a call adds follow the message as slog's key=value text.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LevelVerbose is Redis's "verbose" level, between debug and notice (slog's
// Info is Redis's notice).
const LevelVerbose = slog.Level(-2)

// Format names, as --log-format takes them.
const (
	FormatRedis = "redis"
	FormatSlog  = "slog"
)

// Level maps a loglevel value (debug, verbose, notice, warning, nothing) to
// the slog level that lets exactly its lines through.
func Level(name string) slog.Level {
	switch name {
	case "debug":
		return slog.LevelDebug
	case "verbose":
		return LevelVerbose
	case "warning":
		return slog.LevelWarn
	case "nothing":
		return slog.LevelError + 100
	}
	return slog.LevelInfo // notice
}

// New returns a logger writing format ("redis" or "slog") to w at level.
func New(w io.Writer, format string, level slog.Leveler) (*slog.Logger, error) {
	switch format {
	case FormatRedis, "":
		return slog.New(NewRedisHandler(w, level)), nil
	case FormatSlog:
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})), nil
	}
	return nil, fmt.Errorf("unknown log format %q (redis or slog)", format)
}

// SetReplica sets the role letter of l's lines (Redis's server.masterhost
// test): S while the server replicates a primary, M otherwise. A logger that
// does not write Redis's format is left alone.
func SetReplica(l *slog.Logger, replica bool) {
	h, ok := l.Handler().(*RedisHandler)
	if !ok {
		return
	}
	if replica {
		h.out.role.Store('S')
	} else {
		h.out.role.Store('M')
	}
}

// RedisHandler is a slog.Handler writing Redis's log lines.
type RedisHandler struct {
	out   *output
	level slog.Leveler
	pre   string // attributes from WithAttrs, already formatted
	group string // WithGroup's prefix, "a.b."
}

type output struct {
	role atomic.Int32 // 'M' or 'S'
	mu   sync.Mutex
	w    io.Writer
	pid  int
	buf  []byte
}

// NewRedisHandler returns a handler writing Redis's lines to w.
func NewRedisHandler(w io.Writer, level slog.Leveler) *RedisHandler {
	if level == nil {
		level = slog.LevelInfo
	}
	o := &output{w: w, pid: os.Getpid()}
	o.role.Store('M')
	return &RedisHandler{out: o, level: level}
}

// Enabled implements slog.Handler.
func (h *RedisHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

// levelChar is Redis's letter for l.
func levelChar(l slog.Level) byte {
	switch {
	case l < LevelVerbose:
		return '.'
	case l < slog.LevelInfo:
		return '-'
	case l < slog.LevelWarn:
		return '*'
	}
	return '#'
}

// Handle implements slog.Handler: one line per record, written whole.
func (h *RedisHandler) Handle(_ context.Context, r slog.Record) error {
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	var sb strings.Builder
	sb.WriteString(r.Message)
	sb.WriteString(h.pre)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&sb, h.group, a)
		return true
	})
	o := h.out
	o.mu.Lock()
	defer o.mu.Unlock()
	b := o.buf[:0]
	b = fmt.Appendf(b, "%d:%c ", o.pid, byte(o.role.Load()))
	b = t.AppendFormat(b, "02 Jan 2006 15:04:05.000")
	b = append(b, ' ', levelChar(r.Level), ' ')
	b = append(b, sb.String()...)
	b = append(b, '\n')
	o.buf = b
	_, err := o.w.Write(b)
	return err
}

// appendAttr writes " key=value" as slog's text handler quotes it.
func appendAttr(sb *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g += a.Key + "."
		}
		for _, ga := range a.Value.Group() {
			appendAttr(sb, g, ga)
		}
		return
	}
	sb.WriteByte(' ')
	sb.WriteString(group + a.Key)
	sb.WriteByte('=')
	v := a.Value.String()
	if v == "" || strings.ContainsAny(v, " \t\n\r\"=") {
		v = fmt.Sprintf("%q", v)
	}
	sb.WriteString(v)
}

// WithAttrs implements slog.Handler.
func (h *RedisHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var sb strings.Builder
	for _, a := range as {
		appendAttr(&sb, h.group, a)
	}
	c := *h
	c.pre += sb.String()
	return &c
}

// WithGroup implements slog.Handler.
func (h *RedisHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group += name + "."
	return &c
}

// Raw writes text to the log as it is, without a line prefix (Redis's
// LL_RAW, used for the logo), when l's handler writes Redis's format at
// level notice or lower; a slog-format logger gets nothing.
func Raw(l *slog.Logger, text string) {
	h, ok := l.Handler().(*RedisHandler)
	if !ok || !h.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	_, _ = io.WriteString(h.out.w, text)
}
