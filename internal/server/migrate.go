package server

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/resp"
)

// MIGRATE's connections to its targets (cluster.c's migrate cached
// sockets): one per host:port, kept for the next MIGRATE to the same target
// (which then skips SELECT when the database is the same), at most
// migrateCacheMax, closed after migrateCacheTTL seconds unused. The engine
// lock guards them: MIGRATE's I/O runs under it, blocking every client, as
// Redis's does.

const (
	migrateCacheMax = 64 // MIGRATE_SOCKET_CACHE_ITEMS
	migrateCacheTTL = 10 // MIGRATE_SOCKET_CACHE_TTL, seconds
)

type migrateConn struct {
	conn    net.Conn
	rd      *bufio.Reader
	lastDB  int64 // the target's selected database (-1: unknown)
	lastUse int64 // Unix seconds
}

// Migrate implements command.Server (cluster.c migrateCommand's I/O): a
// failure to reach the target is retried once on a new connection, unless
// it timed out or a key was answered already.
func (s *Server) Migrate(m *command.Migration) command.MigrateResult {
	for mayRetry := true; ; mayRetry = false {
		res, retry := s.migrateOnce(m, mayRetry)
		if !retry {
			return res
		}
	}
}

// migrateOnce is one attempt; retry asks for another on a new connection.
func (s *Server) migrateOnce(m *command.Migration, mayRetry bool) (res command.MigrateResult, retry bool) {
	name := m.Host + ":" + m.Port
	timeout := time.Duration(m.TimeoutMs) * time.Millisecond
	mc, err := s.migrateConnFor(name, m.Host, m.Port, timeout)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
			// Redis connects without blocking and sees a refusal only when
			// it writes: an error writing, retried once
			if mayRetry {
				return command.MigrateResult{}, true
			}
			return command.MigrateResult{Err: "IOERR error or timeout writing to target instance"}, false
		}
		return command.MigrateResult{Err: "IOERR error or timeout connecting to the client"}, false
	}
	var w resp.Writer
	if m.Password != nil {
		if m.Username != nil {
			w.ArrayLen(3)
			w.BulkString("AUTH")
			w.Bulk(m.Username)
		} else {
			w.ArrayLen(2)
			w.BulkString("AUTH")
		}
		w.Bulk(m.Password)
	}
	sel := mc.lastDB != m.DB
	if sel {
		w.ArrayLen(2)
		w.BulkString("SELECT")
		w.BulkString(strconv.FormatInt(m.DB, 10))
	}
	w.Buf = append(w.Buf, m.Cmds...)
	ioFailed := func(what string, err error) (command.MigrateResult, bool) {
		s.closeMigrateConn(name)
		if mayRetry && !errors.Is(err, os.ErrDeadlineExceeded) {
			return command.MigrateResult{}, true
		}
		return command.MigrateResult{Err: "IOERR error or timeout " + what + " to target instance"}, false
	}
	_ = mc.conn.SetDeadline(time.Now().Add(timeout))
	if _, err := mc.conn.Write(w.Buf); err != nil {
		return ioFailed("writing", err)
	}
	var authLine, selLine string
	if m.Password != nil {
		if authLine, err = readLine(mc.rd); err != nil {
			return ioFailed("reading", err)
		}
	}
	if sel {
		if selLine, err = readLine(mc.rd); err != nil {
			return ioFailed("reading", err)
		}
	}
	// a refused AUTH or SELECT fails every key, and is the error reported
	var before string
	switch {
	case m.Password != nil && authLine[0] == '-':
		before = authLine
	case sel && selLine[0] == '-':
		before = selLine
	}
	res.OK = make([]bool, m.N)
	fromTarget := false
	j := 0
	for ; j < m.N; j++ {
		var line string
		if line, err = readLine(mc.rd); err != nil {
			break
		}
		if before == "" && line[0] != '-' {
			res.OK[j] = true
			continue
		}
		if !fromTarget {
			mc.lastDB = -1 // assume the selected database is unknown now
			msg := before
			if msg == "" {
				msg = line
			}
			fromTarget = true
			res.Err = "ERR Target instance replied with error: " + msg[1:]
		}
	}
	if j < m.N { // the connection failed
		if !fromTarget && j == 0 {
			return ioFailed("reading", err)
		}
		s.closeMigrateConn(name)
		if !fromTarget {
			res.Err = "IOERR error or timeout reading to target instance"
		}
		return res, false
	}
	if !fromTarget {
		mc.lastDB = m.DB
	}
	return res, false
}

// readLine reads one reply line without its CRLF; an empty line counts as
// a failure (Redis's connSyncReadLine returning 0).
func readLine(rd *bufio.Reader) (string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if line == "" {
		return "", errors.New("empty reply line")
	}
	return line, nil
}

// migrateConnFor returns the cached connection to name, or opens one
// (dropping a cached one at random when the cache is full). Engine lock.
func (s *Server) migrateConnFor(name, host, port string, timeout time.Duration) (*migrateConn, error) {
	now := s.clock.NowMs() / 1000
	if mc := s.migrate[name]; mc != nil {
		mc.lastUse = now
		return mc, nil
	}
	if len(s.migrate) >= migrateCacheMax {
		for n := range s.migrate { // map order: a random one
			s.closeMigrateConn(n)
			break
		}
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), timeout)
	if err != nil {
		return nil, err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	mc := &migrateConn{conn: conn, rd: bufio.NewReader(conn), lastDB: -1, lastUse: now}
	if s.migrate == nil {
		s.migrate = map[string]*migrateConn{}
	}
	s.migrate[name] = mc
	return mc, nil
}

func (s *Server) closeMigrateConn(name string) {
	if mc := s.migrate[name]; mc != nil {
		_ = mc.conn.Close()
		delete(s.migrate, name)
	}
}

// migrateCron closes the connections unused for migrateCacheTTL seconds
// (migrateCloseTimedoutSockets). Engine lock.
func (s *Server) migrateCron() {
	now := s.clock.NowMs() / 1000
	for name, mc := range s.migrate {
		if now-mc.lastUse > migrateCacheTTL {
			s.closeMigrateConn(name)
		}
	}
}
