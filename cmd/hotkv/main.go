// Command hotkv runs the HotKV server: `hotkv [config-file] [--name value ...]`,
// the same command line as redis-server. It wires configuration, logging and
// signals to server.Run; there is no logic here.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hotkv/hotkv/internal/config"
	"github.com/hotkv/hotkv/internal/logging"
	"github.com/hotkv/hotkv/internal/server"
)

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, nil)) }

const usage = `Usage: hotkv [/path/to/hotkv.conf] [options]
       hotkv -v or --version
       hotkv -h or --help

Examples:
       hotkv                          (127.0.0.1:6379, in-memory defaults)
       hotkv /etc/hotkv/hotkv.conf
       hotkv --port 7777
       hotkv hotkv.conf --port 7000 --loglevel verbose

Options are redis.conf parameter names (Redis's own), e.g. --bind, --port,
--databases, --timeout, --maxclients, --requirepass, --proto-max-bulk-len.

HotKV's own options (not config parameters):
       --log-format redis             the log's lines: redis (default), as redis-server
                                      writes them, or slog (key=value text)
       --pprof-addr 127.0.0.1:6060    serve net/http/pprof on that address (off by default)
       --busy-poll-us 50              an idle event loop polls this long before it sleeps
                                      (default 50; 0: sleep at once, the least CPU)
`

// run is main without the process: ready, when not nil, receives the listening
// address once the server accepts connections (tests use it).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready chan<- string) int {
	if len(args) == 1 {
		switch args[0] {
		case "-v", "--version":
			fmt.Fprintf(stdout, "HotKV server v=%s (Redis %s semantics)\n", server.HotKVVersion, server.RedisVersion)
			return 0
		case "-h", "--help":
			fmt.Fprint(stdout, usage)
			return 0
		}
	}
	args, pprofAddr, err := takePprofAddr(args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	args, busyPoll, err := takeBusyPoll(args)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	args, logFormat, err := takeOption(args, "log-format", "slog")
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	cfg := config.New()
	configFile, err := cfg.ParseArgs(args)
	if err != nil {
		var le *config.LoadError
		if errors.As(err, &le) {
			fmt.Fprint(stderr, "\n"+err.Error()+"\n") // redis-server's format
		} else {
			fmt.Fprintln(stderr, err)
		}
		return 1
	}
	if cfg.Bool("cluster-enabled") {
		// accepting it would start a standalone server where a cluster node was asked for
		fmt.Fprintln(stderr, "HotKV has no cluster mode: cluster-enabled yes is not supported")
		return 1
	}
	level := new(slog.LevelVar)
	logger, closeLog, err := newLogger(cfg, level, logFormat, stdout)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer closeLog()
	cfg.OnChange("loglevel", func(v string) error {
		level.Set(logging.Level(v))
		return nil
	})
	logStarting(logger, configFile)
	if pprofAddr != "" {
		stopPprof, err := servePprof(pprofAddr)
		if err != nil {
			logger.Error("could not serve pprof", "addr", pprofAddr, "err", err)
			return 1
		}
		defer stopPprof()
		logger.Info("pprof", "addr", pprofAddr)
	}
	srv := server.New(cfg, server.Options{Logger: logger, BusyPoll: busyPoll})
	logBanner(logger, cfg)
	if err := srv.Listen(); err != nil {
		logListenFailure(logger, cfg, err)
		return 1
	}
	removePid := writePidFile(logger, cfg)
	defer removePid()
	// SIGTERM and SIGINT run SHUTDOWN with shutdown-on-sigterm/-sigint's flags
	// (saving when save points are set); after a failed save the server
	// keeps running, as Redis does
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for sig := range sigs {
			srv.ShutdownOnSignal(sig == syscall.SIGINT)
		}
	}()
	if ready != nil {
		ready <- srv.Addr().String()
	}
	if err := srv.Run(ctx); err != nil {
		logger.Error("server stopped", "err", err)
		return 1
	}
	return 0
}

// takeOption removes "--NAME VALUE" (or "--NAME=VALUE") from args: HotKV's
// own process options (--pprof-addr, --busy-poll-us) are not redis.conf
// parameters, so they never reach the configuration (CONFIG GET does not show
// them). example is quoted when the value is missing.
func takeOption(args []string, name, example string) (rest []string, val string, err error) {
	flag := "--" + name
	rest = make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == flag:
			if i+1 >= len(args) {
				return nil, "", fmt.Errorf("%s needs a value, e.g. %s", flag, example)
			}
			val = args[i+1]
			i++
		case strings.HasPrefix(a, flag+"="):
			val = strings.TrimPrefix(a, flag+"=")
		default:
			rest = append(rest, a)
		}
	}
	return rest, val, nil
}

// takePprofAddr takes --pprof-addr ADDR.
func takePprofAddr(args []string) (rest []string, addr string, err error) {
	return takeOption(args, "pprof-addr", "127.0.0.1:6060")
}

// defaultBusyPollUs is --busy-poll-us's default (docs/decisions/0029).
const defaultBusyPollUs = 50

// takeBusyPoll takes --busy-poll-us N: how long an idle event loop keeps
// polling for events before it sleeps (0: sleep at once).
func takeBusyPoll(args []string) (rest []string, d time.Duration, err error) {
	rest, val, err := takeOption(args, "busy-poll-us", "50")
	if err != nil || val == "" {
		return rest, defaultBusyPollUs * time.Microsecond, err
	}
	n, perr := strconv.ParseUint(val, 10, 16)
	if perr != nil || n > 1000 {
		return nil, 0, fmt.Errorf("--busy-poll-us must be 0..1000 microseconds, got %q", val)
	}
	return rest, time.Duration(n) * time.Microsecond, nil
}

// servePprof serves the net/http/pprof handlers on their own mux at addr (never
// on http.DefaultServeMux); the returned func stops it.
func servePprof(addr string) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mux}
	go func() { _ = hs.Serve(ln) }()
	return func() { _ = hs.Close() }, nil
}

// newLogger builds the logger from loglevel and logfile ("": standard
// output, as Redis) in format ("redis", the default, or "slog").
func newLogger(cfg *config.Config, level *slog.LevelVar, format string, stdout io.Writer) (*slog.Logger, func(), error) {
	level.Set(logging.Level(cfg.String("loglevel")))
	out, closer := stdout, func() {}
	if path := cfg.String("logfile"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("can't open the log file: %w", err)
		}
		out, closer = f, func() { _ = f.Close() }
	}
	l, err := logging.New(out, format, level)
	if err != nil {
		closer()
		return nil, nil, err
	}
	return l, closer, nil
}
