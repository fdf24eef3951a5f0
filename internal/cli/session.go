package cli

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// session is one hotkv-cli run: the options, the connection and the client
// state redis-cli tracks (selected database, MULTI, protocol, pub/sub).
type session struct {
	cfg *Config
	env *Env
	out *bufio.Writer

	mu      sync.Mutex // guards conn and aborted against the interrupt handler
	conn    *Conn
	aborted bool // Ctrl-C ended a blocking mode (pub/sub, MONITOR)
	// blocking is set while MONITOR or pub/sub output runs (Ctrl-C then
	// returns to the prompt instead of exiting).
	blocking atomic.Bool

	host     string
	port     int
	inputDB  int // the database asked for (-n, SELECT)
	dbnum    int // the database selected on the current connection
	inMulti  bool
	preMulti int
	resp3    bool // the current connection speaks RESP3

	interactive bool
	pubsub      bool
	monitor     bool
	shutdown    bool
	lastKind    Kind

	// help and hints are read by the line editor's goroutine too.
	help  atomic.Pointer[Help]
	hints atomic.Bool
}

func newSession(cfg *Config, env *Env) *session {
	s := &session{cfg: cfg, env: env, out: bufio.NewWriterSize(env.Stdout, 64<<10),
		host: cfg.Host, port: cfg.Port, inputDB: cfg.DB}
	s.hints.Store(true)
	return s
}

func (s *session) addr() string { return net.JoinHostPort(s.host, strconv.Itoa(s.port)) }

// Prompt is the interactive prompt: "hotkv> " for the default server,
// "hotkv 10.0.0.5:7000> " for another, "[n]" for a non-zero database and
// "(TX)" inside MULTI, as redis-cli shows them.
func (s *session) Prompt() string {
	if s.getConn() == nil {
		return "not connected> "
	}
	return prompt(s.host, s.port, s.cfg.Socket, s.dbnum, s.inMulti)
}

func prompt(host string, port int, socket string, db int, multi bool) string {
	var b strings.Builder
	b.WriteString("hotkv")
	switch {
	case socket != "":
		b.WriteString(" " + socket)
	case host != DefaultHost || port != DefaultPort:
		b.WriteString(" " + net.JoinHostPort(host, strconv.Itoa(port)))
	}
	if db != 0 {
		fmt.Fprintf(&b, "[%d]", db)
	}
	if multi {
		b.WriteString("(TX)")
	}
	b.WriteString("> ")
	return b.String()
}

func (s *session) getConn() *Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

func (s *session) setConn(c *Conn) {
	s.mu.Lock()
	s.conn = c
	s.mu.Unlock()
}

// errf writes to stderr.
func (s *session) errf(format string, a ...any) {
	s.out.Flush()
	fmt.Fprintf(s.env.Stderr, format, a...)
}

// connect opens the connection (again, with force) and runs AUTH, SELECT and
// HELLO 3 as the options ask.
func (s *session) connect(force, quiet bool) error {
	if c := s.getConn(); c != nil && !force {
		return nil
	}
	if old := s.getConn(); old != nil {
		old.Close()
		s.dbnum = 0
		s.inMulti = false
	}
	s.setConn(nil)
	c, err := Dial(s.addr(), s.cfg.Socket)
	if err != nil {
		if !quiet {
			if s.cfg.Socket != "" {
				s.errf("Could not connect to HotKV at %s: %v\n", s.cfg.Socket, err)
			} else {
				s.errf("Could not connect to HotKV at %s:%d: %v\n", s.host, s.port, err)
			}
		}
		return err
	}
	s.setConn(c)
	s.resp3 = false
	if err := s.auth(); err != nil {
		return err
	}
	if err := s.selectDB(); err != nil {
		return err
	}
	if s.cfg.Resp3 && !s.cfg.Resp2 {
		r, err := c.Do("HELLO", "3")
		if err != nil {
			s.errf("\nI/O error\n")
			return err
		}
		if r.Kind == KindError {
			s.errf("HELLO 3 failed: %s\n", r.Str)
			return errors.New(string(r.Str))
		}
		s.resp3 = true
	}
	return nil
}

func (s *session) auth() error {
	if s.cfg.Auth == "" {
		return nil
	}
	args := []string{"AUTH", s.cfg.Auth}
	if s.cfg.User != "" {
		args = []string{"AUTH", s.cfg.User, s.cfg.Auth}
	}
	r, err := s.getConn().Do(args...)
	if err != nil {
		s.errf("\nI/O error\n")
		return err
	}
	if r.Kind == KindError {
		s.errf("AUTH failed: %s\n", r.Str)
		return errors.New(string(r.Str))
	}
	return nil
}

func (s *session) selectDB() error {
	if s.inputDB == s.dbnum {
		return nil
	}
	r, err := s.getConn().Do("SELECT", strconv.Itoa(s.inputDB))
	if err != nil {
		s.errf("\nI/O error\n")
		return err
	}
	if r.Kind == KindError {
		s.errf("SELECT %d failed: %s\n", s.inputDB, r.Str)
		return errors.New(string(r.Str))
	}
	s.dbnum = s.inputDB
	return nil
}

// rawOutputCommand reports whether redis-cli prints the reply of argv as raw
// bytes even on a terminal (INFO, CLIENT LIST, ...).
func rawOutputCommand(argv []string) bool {
	cmd := strings.ToLower(argv[0])
	sub := ""
	if len(argv) >= 2 {
		sub = strings.ToLower(argv[1])
	}
	n := len(argv)
	switch cmd {
	case "info", "lolwut":
		return true
	case "debug":
		return n >= 2 && (sub == "htstats" || sub == "htstats-key" || sub == "client-eviction")
	case "memory":
		return n >= 2 && (sub == "malloc-stats" || sub == "doctor")
	case "cluster":
		return n == 2 && (sub == "nodes" || sub == "info")
	case "client":
		return n >= 2 && (sub == "list" || sub == "info")
	case "latency":
		return (n == 3 && sub == "graph") || (n == 2 && sub == "doctor")
	case "proxy":
		return n >= 2 && sub == "info"
	}
	return false
}

// errExit ends the program with a code after a fatal error (redis-cli's
// exit() calls deep inside its functions).
type errExit struct{ code int }

func (e *errExit) Error() string { return "exit status " + strconv.Itoa(e.code) }

// errConn is a lost connection in interactive mode: the caller reports it
// and reconnects on the next command.
type errConn struct{ err error }

func (e *errConn) Error() string { return e.err.Error() }

// formatReply renders r in the session's output mode; verbatim replies
// (INFO...) are written raw without a trailing delimiter.
func (s *session) formatReply(dst []byte, r *Reply, verbatim bool) []byte {
	switch {
	case verbatim:
		return FormatRaw(dst, r, s.cfg.MBDelim)
	case s.cfg.Output == OutputStandard:
		return FormatTTY(dst, r, "")
	case s.cfg.Output == OutputRaw:
		dst = FormatRaw(dst, r, s.cfg.MBDelim)
		return append(dst, s.cfg.CmdDelim...)
	default:
		dst = FormatCSV(dst, r)
		return append(dst, '\n')
	}
}

// printPush shows an out-of-band RESP3 push (when --show-pushes is on).
func (s *session) printPush(r *Reply) {
	if !s.cfg.PushOutput {
		return
	}
	var b []byte
	if s.cfg.Output == OutputStandard && isInvalidate(r) {
		b = FormatInvalidateTTY(nil, r)
	} else {
		b = s.formatReply(nil, r, false)
	}
	s.out.Write(b)
	s.out.Flush()
}

// readReply reads and prints one reply (redis-cli's cliReadReply). With
// pushesAreReplies (pub/sub), RESP3 pushes are the replies; otherwise they
// are shown out of band and the read goes on.
func (s *session) readReply(verbatim, pushesAreReplies bool) (*Reply, error) {
	c := s.getConn()
	var r *Reply
	var err error
	if c == nil {
		err = ErrServerClosed
	} else {
		for {
			r, err = c.Read()
			if err != nil || r.Kind != KindPush || pushesAreReplies {
				break
			}
			s.printPush(r)
		}
	}
	if err != nil {
		s.mu.Lock()
		aborted := s.aborted
		s.aborted = false
		s.mu.Unlock()
		if aborted {
			s.monitor, s.pubsub = false, false
			return nil, s.connect(true, false)
		}
		if s.shutdown {
			if c != nil {
				c.Close()
			}
			s.setConn(nil)
			return nil, nil
		}
		if s.interactive {
			return nil, &errConn{err}
		}
		s.errf("Error: %v\n", err)
		return nil, &errExit{1}
	}
	s.lastKind = r.Kind
	if !s.interactive && s.cfg.SetErrCode && r.Kind == KindError {
		s.errf("%s\n", r.Str)
		return nil, &errExit{1}
	}
	s.out.Write(s.formatReply(nil, r, verbatim))
	s.out.Flush()
	return r, nil
}

// sendCommand sends argv repeat times (forever when negative) and prints the
// replies, tracking the state the prompt shows (redis-cli's cliSendCommand).
func (s *session) sendCommand(argv []string, repeat int64) error {
	c := s.getConn()
	if c == nil {
		return &errConn{ErrServerClosed}
	}
	cmd := strings.ToLower(argv[0])
	verbatim := rawOutputCommand(argv)
	switch cmd {
	case "shutdown":
		s.shutdown = true
	case "monitor":
		s.monitor = true
	case "subscribe", "psubscribe", "ssubscribe":
		s.pubsub = true
	}
	for repeat < 0 || repeat > 0 {
		if repeat > 0 {
			repeat--
		}
		c = s.getConn()
		if c == nil {
			return &errConn{ErrServerClosed}
		}
		c.Append(argv)
		if err := c.Flush(); err != nil {
			if s.interactive {
				return &errConn{err}
			}
			s.errf("Error: %v\n", err)
			return &errExit{1}
		}
		if s.monitor {
			s.blocking.Store(true)
			defer s.blocking.Store(false)
			for s.monitor {
				r, err := s.readReply(verbatim, false)
				if err != nil {
					return s.fatal(err)
				}
				if r == nil || s.lastKind == KindError {
					s.monitor = false
				}
			}
			return nil
		}
		if s.pubsub {
			s.blocking.Store(true)
			defer s.blocking.Store(false)
			if s.cfg.Output != OutputRaw {
				s.out.WriteString("Reading messages... (press Ctrl-C to quit)\n")
				s.out.Flush()
			}
			for s.pubsub {
				r, err := s.readReply(verbatim, true)
				if err != nil {
					return s.fatal(err)
				}
				if r == nil || s.lastKind == KindError {
					s.pubsub = false
				}
			}
			return nil
		}
		r, err := s.readReply(verbatim, false)
		if err != nil {
			return err
		}
		if r != nil {
			s.track(argv, r)
		}
		if s.cfg.Interval > 0 {
			s.out.Flush()
			time.Sleep(s.cfg.Interval)
		}
	}
	return nil
}

// fatal turns a lost connection inside a blocking mode into the exit
// redis-cli does there.
func (s *session) fatal(err error) error {
	var ce *errConn
	if errors.As(err, &ce) {
		s.errf("Error: %v\n", ce.err)
		return &errExit{1}
	}
	return err
}

// track follows SELECT, MULTI/EXEC/DISCARD, RESET and HELLO for the prompt
// and reconnections.
func (s *session) track(argv []string, r *Reply) {
	cmd := strings.ToLower(argv[0])
	n := len(argv)
	isErr := r.Kind == KindError
	switch {
	case cmd == "select" && n == 2 && !isErr:
		s.dbnum = atoi(argv[1])
		s.inputDB = s.dbnum
	case cmd == "auth" && (n == 2 || n == 3):
		_ = s.selectDB()
	case cmd == "multi" && n == 1 && !isErr:
		s.inMulti = true
		s.preMulti = s.dbnum
	case cmd == "exec" && n == 1 && s.inMulti:
		s.inMulti = false
		if isErr || r.Kind == KindNil {
			s.dbnum = s.preMulti
			s.inputDB = s.dbnum
		}
	case cmd == "discard" && n == 1 && !isErr:
		s.inMulti = false
		s.dbnum = s.preMulti
		s.inputDB = s.dbnum
	case cmd == "reset" && n == 1 && !isErr:
		s.inMulti = false
		s.dbnum, s.inputDB = 0, 0
		s.resp3 = false
	case cmd == "hello":
		if r.Kind == KindMap {
			s.resp3 = true
		} else if r.Kind == KindArray {
			s.resp3 = false
		}
	}
}

// issue runs one command line's words, with help handled locally and a
// reconnection first when the connection was lost (issueCommandRepeat).
func (s *session) issue(argv []string, repeat int64) error {
	if strings.EqualFold(argv[0], "help") || argv[0] == "?" {
		if len(argv) > 1 && s.help.Load() == nil {
			s.loadHelp()
		}
		s.help.Load().WriteHelp(s.out, argv[1:])
		s.out.Flush()
		return nil
	}
	if c := s.getConn(); c == nil || c.Err != nil {
		if err := s.connect(true, false); err != nil {
			if c := s.getConn(); c != nil {
				s.errf("Error: %v\n", err)
				c.Close()
				s.setConn(nil)
			}
			return err
		}
		if s.interactive && s.env.StdinTTY && s.help.Load() == nil {
			s.loadHelp() // completion and hints, now that there is a server
		}
	}
	err := s.sendCommand(argv, repeat)
	var ce *errConn
	if errors.As(err, &ce) {
		s.errf("Error: %v\n", ce.err)
		if c := s.getConn(); c != nil {
			c.Close()
		}
		s.setConn(nil)
	}
	return err
}

// loadHelp fetches COMMAND DOCS (quietly: help works offline, empty).
func (s *session) loadHelp() {
	if err := s.connect(false, true); err != nil {
		return
	}
	if h, err := LoadHelp(s.getConn()); err == nil {
		s.help.Store(h)
	}
}
