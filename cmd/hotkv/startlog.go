package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"

	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/logging"
	"github.com/hotkv/hotkv/internal/server"
)

// The start-up lines follow redis-server's, which Redis's test harness and
// tools read: the harness waits for " PID: <pid>" (the logo) followed by
// "Server initialized", then for "Ready to accept connections"; it retries
// on another port when it sees "Failed listening on port".

// logStarting logs the first lines: the version and the configuration's source.
func logStarting(l *slog.Logger, configFile string) {
	l.Info("oO0OoO0OoO0Oo HotKV is starting oO0OoO0OoO0Oo")
	l.Info(fmt.Sprintf("HotKV version=%s, redis_version=%s, bits=%d, pid=%d, just started",
		server.HotKVVersion, server.RedisVersion, strconv.IntSize, os.Getpid()))
	if configFile == "" {
		l.Warn("Warning: no config file specified, using the default config. In order to specify a config file use hotkv /path/to/hotkv.conf")
	} else {
		l.Info("Configuration loaded")
	}
}

const logo = `
  _   _       _   _  ____     __
 | | | | ___ | |_| |/ /\ \   / /     HotKV %s (Redis %s semantics) %d bit
 | |_| |/ _ \| __| ' /  \ \ / /      Running in standalone mode
 |  _  | (_) | |_| . \   \ V /       Port: %d
 |_| |_|\___/ \__|_|\_\   \_/        PID: %d

`

// logBanner writes the logo, as Redis's redisAsciiArt: when always-show-logo
// is set or the log is a terminal; otherwise one line with the mode and port.
func logBanner(l *slog.Logger, cfg *config.Config) {
	port := cfg.Int("port")
	if cfg.Bool("always-show-logo") || (cfg.String("logfile") == "" && isTerminal(os.Stdout)) {
		logging.Raw(l, fmt.Sprintf(logo, server.HotKVVersion, server.RedisVersion, strconv.IntSize, port, os.Getpid()))
		return
	}
	l.Info(fmt.Sprintf("Running mode=standalone, port=%d.", port))
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// logListenFailure logs a failed listen as Redis does.
func logListenFailure(l *slog.Logger, cfg *config.Config, err error) {
	var oe *net.OpError
	kind, port := "tcp", cfg.Int("port")
	if errors.As(err, &oe) {
		if oe.Net == "unix" {
			kind, port = "unix", 0
			l.Warn(fmt.Sprintf("Failed opening Unix socket: %v", oe.Err))
		} else {
			l.Warn(fmt.Sprintf("Warning: Could not create server TCP listening socket %v: %v", oe.Addr, oe.Err))
		}
	} else {
		l.Warn(err.Error())
	}
	l.Warn(fmt.Sprintf("Failed listening on port %d (%s), aborting.", port, kind))
}

// writePidFile writes the pid file when pidfile is set (Redis's
// createPidFile; HotKV never daemonizes) and returns what removes it at exit.
func writePidFile(l *slog.Logger, cfg *config.Config) func() {
	path := cfg.String("pidfile")
	if path == "" {
		return func() {}
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		l.Warn("Failed to write PID file: " + errors.Unwrap(err).Error())
		return func() {}
	}
	return func() {
		l.Info("Removing the pid file.")
		_ = os.Remove(path)
	}
}
