// Package cli is hotkv-cli: the interactive "hotkv>" shell and redis-cli's
// command line (one-shot commands, commands from stdin, --pipe, --scan,
// --latency), with replies rendered byte for byte as redis-cli renders them,
// and the guided tours ("hotkv-cli tour locks").
//
// Main is the whole program; cmd/hotkv-cli only wires the process to it.
package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
)

// Env is the process around Main: standard streams, whether they are
// terminals, the environment and how to leave at once.
type Env struct {
	Stdin     io.Reader
	Stdout    io.Writer
	Stderr    io.Writer
	StdinTTY  bool
	StdoutTTY bool
	Getenv    func(string) string
	// Exit ends the process (Ctrl-C outside a blocking mode in interactive
	// mode, as redis-cli's SIGINT handler does).
	Exit func(code int)
}

// OSEnv is the real process environment.
func OSEnv() *Env {
	return &Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		StdinTTY:  isatty.IsTerminal(os.Stdin.Fd()),
		StdoutTTY: isatty.IsTerminal(os.Stdout.Fd()),
		Getenv:    os.Getenv,
		Exit:      os.Exit,
	}
}

// Main runs hotkv-cli with args (without the program name) and returns the
// exit code.
func Main(args []string, env *Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	cfg, err := parseOptions(args, env.StdoutTTY, env.Stdout, env.Stderr, env.Getenv)
	if err != nil {
		var ex *exitRequest
		if errors.As(err, &ex) {
			return ex.code
		}
		io.WriteString(env.Stderr, err.Error()+"\n")
		return 1
	}
	s := newSession(cfg, env)
	defer s.out.Flush()
	code := s.run()
	s.out.Flush()
	if c := s.getConn(); c != nil {
		c.Close()
	}
	return code
}

func exitCode(err error) int {
	var ex *errExit
	if errors.As(err, &ex) {
		return ex.code
	}
	if err != nil {
		return 1
	}
	return 0
}

func (s *session) run() int {
	cfg := s.cfg
	switch {
	case cfg.Latency:
		if s.connect(false, false) != nil {
			return 1
		}
		return exitCode(s.latencyMode())
	case cfg.Stat:
		if s.connect(false, false) != nil {
			return 1
		}
		return exitCode(s.statMode())
	case cfg.Locks:
		if s.connect(false, false) != nil {
			return 1
		}
		return exitCode(s.locksMode())
	case cfg.Pipe:
		if s.connect(false, false) != nil {
			return 1
		}
		return exitCode(s.pipeMode())
	case cfg.Scan:
		if s.connect(false, false) != nil {
			return 1
		}
		return exitCode(s.scanMode())
	case len(cfg.Args) > 0 && cfg.Args[0] == "tour":
		return s.tourMain(cfg.Args[1:])
	case len(cfg.Args) == 0:
		_ = s.connect(false, false)
		if s.env.StdinTTY {
			return exitCode(s.interactiveMode())
		}
		return exitCode(s.stdinMode())
	}
	if s.connect(false, false) != nil {
		return 1
	}
	return exitCode(s.oneShot())
}

// oneShot runs the command given on the command line (redis-cli's
// noninteractive): -x appends stdin as the last argument.
func (s *session) oneShot() error {
	argv := append([]string(nil), s.cfg.Args...)
	if s.cfg.StdinLastArg {
		data, err := io.ReadAll(s.env.Stdin)
		if err != nil {
			s.errf("Reading from standard input: %v\n", err)
			return &errExit{1}
		}
		argv = append(argv, string(data))
	}
	return s.issue(argv, s.cfg.Repeat)
}

// sensitive reports commands whose lines stay out of the history file
// (AUTH, ACL SETUSER, CONFIG SET of passwords, HELLO ... AUTH, MIGRATE ... AUTH).
func sensitive(argv []string) bool {
	n := len(argv)
	if n == 0 {
		return false
	}
	eq := strings.EqualFold
	switch {
	case eq(argv[0], "auth"):
		return true
	case n > 1 && eq(argv[0], "acl") && eq(argv[1], "setuser"):
		return true
	case n > 2 && eq(argv[0], "config") && eq(argv[1], "set"):
		for j := 2; j < n; j += 2 {
			if eq(argv[j], "masterauth") || eq(argv[j], "masteruser") || eq(argv[j], "requirepass") {
				return true
			}
		}
	case n > 4 && eq(argv[0], "hello"):
		for j := 2; j < n; j++ {
			more := n - 1 - j
			switch {
			case eq(argv[j], "auth") && more >= 2:
				return true
			case eq(argv[j], "setname") && more > 0:
				j++
			default:
				return false
			}
		}
	case n > 7 && eq(argv[0], "migrate"):
		for j := 6; j < n; j++ {
			more := n - 1 - j
			switch {
			case eq(argv[j], "auth") && more > 0:
				return true
			case eq(argv[j], "auth2") && more >= 2:
				return true
			case eq(argv[j], "keys") && more > 0:
				return false
			}
		}
	}
	return false
}

// lineResult tells the loop what a line did.
type lineResult int

const (
	lineDone lineResult = iota
	lineQuit
)

// runLine executes one line typed at the prompt or read from stdin
// (the body of redis-cli's repl loop). addHistory is called for lines that
// belong in the history.
func (s *session) runLine(line string, addHistory func(string)) lineResult {
	if line == "" {
		return lineDone
	}
	argv, ok := SplitArgs(line)
	if !ok {
		s.out.WriteString("Invalid argument(s)\n")
		s.out.Flush()
		addHistory(line)
		return lineDone
	}
	if len(argv) == 0 {
		return lineDone
	}
	repeat, skip := int64(1), 0
	if len(argv) > 1 {
		if n, ok := parseRepeat(argv[0]); ok {
			if n <= 0 {
				s.out.WriteString("Invalid hotkv-cli repeat command option value.\n")
				s.out.Flush()
				return lineDone
			}
			repeat, skip = n, 1
		}
	}
	if !sensitive(argv[skip:]) {
		addHistory(line)
	}
	switch {
	case strings.EqualFold(argv[0], "quit") || strings.EqualFold(argv[0], "exit"):
		return lineQuit
	case argv[0][0] == ':':
		s.setPreference(argv)
	case strings.EqualFold(argv[0], "connect"):
		if len(argv) != 3 {
			s.out.WriteString("wrong number of arguments for 'connect' command.\n")
			s.out.Flush()
			return lineDone
		}
		s.host, s.port = argv[1], atoi(argv[2])
		_ = s.connect(true, false)
	case len(argv) == 1 && strings.EqualFold(argv[0], "clear"):
		s.out.WriteString("\x1b[H\x1b[2J")
		s.out.Flush()
	default:
		start := time.Now()
		err := s.issue(argv[skip:], repeat)
		var ex *errExit
		if errors.As(err, &ex) {
			return lineQuit
		}
		if elapsed := time.Since(start); elapsed.Milliseconds() >= 500 && s.cfg.Output == OutputStandard {
			fmt.Fprintf(s.out, "(%.2fs)\n", float64(elapsed.Milliseconds())/1000)
			s.out.Flush()
		}
	}
	return lineDone
}

// parseRepeat is the leading "N " of "N command" (strtol of the whole word).
func parseRepeat(w string) (int64, bool) {
	if w == "" {
		return 0, false
	}
	lead := leadingInt(w)
	if len(lead) != len(strings.TrimLeft(w, " \t\n\v\f\r")) || lead == "" || lead == "-" || lead == "+" {
		return 0, false
	}
	n, err := strconv.ParseInt(lead, 10, 64)
	if err != nil {
		return -1, true // ERANGE
	}
	return n, true
}

func (s *session) setPreference(argv []string) {
	if strings.EqualFold(argv[0], ":set") && len(argv) >= 2 {
		switch {
		case strings.EqualFold(argv[1], "hints"):
			s.hints.Store(true)
		case strings.EqualFold(argv[1], "nohints"):
			s.hints.Store(false)
		default:
			s.out.WriteString("unknown hotkv-cli preference '" + argv[1] + "'\n")
		}
	} else {
		s.out.WriteString("unknown hotkv-cli internal command '" + argv[0] + "'\n")
	}
	s.out.Flush()
}

// stdinMode runs the lines of a non-terminal stdin (no prompt, no history),
// as redis-cli does when commands are piped in.
func (s *session) stdinMode() error {
	s.interactive = true
	r := newLineReader(s.env.Stdin)
	for {
		line, err := r.next()
		if err != nil {
			return nil
		}
		if s.runLine(line, func(string) {}) == lineQuit {
			return nil
		}
	}
}

// interruptHandler makes Ctrl-C end a blocking mode (MONITOR, pub/sub) and
// return to the prompt; elsewhere it exits, as redis-cli's SIGINT handler.
func (s *session) interruptHandler() (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				if s.blocking.Load() {
					s.mu.Lock()
					s.aborted = true
					if s.conn != nil {
						s.conn.Close()
					}
					s.mu.Unlock()
				} else if s.env.Exit != nil {
					s.out.Flush()
					s.env.Exit(1)
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}

// lineReader reads the lines of a non-terminal stdin, of any length, as
// linenoise does without a terminal: the newline is dropped, a last line
// without one still counts.
type lineReader struct{ br *bufio.Reader }

func newLineReader(r io.Reader) *lineReader { return &lineReader{bufio.NewReader(r)} }

func (l *lineReader) next() (string, error) {
	line, err := l.br.ReadString('\n')
	if err != nil {
		if line != "" {
			return line, nil
		}
		return "", err
	}
	return line[:len(line)-1], nil
}
