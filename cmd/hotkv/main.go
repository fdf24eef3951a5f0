// Command hotkv runs the HotKV server: `hotkv [config-file] [--name value ...]`,
// the same command line as redis-server. It wires configuration, logging and
// signals to server.Run; there is no logic here.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/server"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

func run(args []string, stderr io.Writer) int {
	cfg := config.New()
	if _, err := cfg.ParseArgs(args); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	logger, closeLog, err := newLogger(cfg, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer closeLog()
	srv := server.New(cfg, server.Options{Logger: logger})
	if err := srv.Listen(); err != nil {
		logger.Error("could not listen", "err", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger.Info("HotKV started", "version", server.HotKVVersion, "pid", os.Getpid())
	if err := srv.Run(ctx); err != nil {
		logger.Error("server stopped", "err", err)
		return 1
	}
	return 0
}

// newLogger builds the slog logger from loglevel and logfile ("" = stderr).
func newLogger(cfg *config.Config, stderr io.Writer) (*slog.Logger, func(), error) {
	var lvl slog.Level
	switch cfg.String("loglevel") {
	case "debug":
		lvl = slog.LevelDebug
	case "verbose", "notice":
		lvl = slog.LevelInfo
	case "warning":
		lvl = slog.LevelWarn
	case "nothing":
		lvl = slog.LevelError + 100
	}
	out, closer := stderr, func() {}
	if path := cfg.String("logfile"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("can't open the log file: %w", err)
		}
		out, closer = f, func() { _ = f.Close() }
	}
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: lvl})), closer, nil
}
