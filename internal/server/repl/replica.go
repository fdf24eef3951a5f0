package repl

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hotkv/hotkv/internal/resp"
)

// The replica side's link to its master (Redis's syncWithMaster and
// readSyncBulkPayload): the handshake, PSYNC, the snapshot payload, then
// the stream, command by command with the bytes each took (the replication
// offset). The server drives it from a goroutine of its own; nothing here
// touches the dataset.

// MasterLink is one connection to a master.
type MasterLink struct {
	conn net.Conn
	br   *bufio.Reader
	rd   *resp.Reader // the stream, after the payload
	wmu  sync.Mutex   // writes: the link's goroutine and the ACK ticker
	// closed is set by Close (CLIENT KILL TYPE MASTER, REPLICAOF)
	closed atomic.Bool
	// timeout bounds each step of the handshake and each read of the
	// payload and the stream (repl-timeout; ns)
	timeout   atomic.Int64
	buffering atomic.Bool // BufferStream reads the stream (no read deadline)
}

// Timeout is the link's repl-timeout.
func (l *MasterLink) Timeout() time.Duration { return time.Duration(l.timeout.Load()) }

// SetTimeout changes the link's repl-timeout (CONFIG SET repl-timeout): a
// read waiting now fails d after this call unless data comes, as Redis's
// replicationCron measures the timeout from the last I/O with the current
// setting.
func (l *MasterLink) SetTimeout(d time.Duration) {
	l.timeout.Store(int64(d))
	if !l.buffering.Load() { // BufferStream's reads wait without a deadline
		_ = l.conn.SetReadDeadline(time.Now().Add(d))
	}
}

// Dial connects to host:port; over TLS with tc (tls-replication), the
// handshake within timeout.
func Dial(host string, port int, timeout time.Duration, tc *tls.Config) (*MasterLink, error) {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), timeout)
	if err != nil {
		return nil, err
	}
	if tc != nil {
		tconn := tls.Client(conn, tc)
		_ = conn.SetDeadline(time.Now().Add(timeout))
		if err := tconn.Handshake(); err != nil {
			conn.Close()
			return nil, err
		}
		_ = conn.SetDeadline(time.Time{})
		conn = tconn
	}
	l := &MasterLink{conn: conn, br: bufio.NewReaderSize(streamReader(conn), 64<<10)}
	l.timeout.Store(int64(timeout))
	return l, nil
}

// Close closes the connection (any goroutine: it unblocks a read).
func (l *MasterLink) Close() error {
	l.closed.Store(true)
	return l.conn.Close()
}

// Closed reports whether Close was called.
func (l *MasterLink) Closed() bool { return l.closed.Load() }

// RemoteAddr is the master's address.
func (l *MasterLink) RemoteAddr() net.Addr { return l.conn.RemoteAddr() }

// LocalAddr is the link's own address.
func (l *MasterLink) LocalAddr() net.Addr { return l.conn.LocalAddr() }

// Send writes one command.
func (l *MasterLink) Send(args ...string) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_ = l.conn.SetWriteDeadline(time.Now().Add(l.Timeout()))
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	_, err := l.conn.Write(resp.AppendCommand(nil, b...))
	return err
}

// readLine reads one reply line (without CRLF); newlines the master sends
// to keep the link alive while it prepares a snapshot are skipped.
func (l *MasterLink) readLine() (string, error) {
	for {
		_ = l.conn.SetReadDeadline(time.Now().Add(l.Timeout()))
		line, err := l.br.ReadString('\n')
		if err != nil {
			return "", err
		}
		line = strings.TrimRight(line, "\r\n")
		if line != "" {
			return line, nil
		}
	}
}

// Call sends a command of the handshake and reads its one-line reply; an
// error reply is returned as the error.
func (l *MasterLink) Call(args ...string) (string, error) {
	if err := l.Send(args...); err != nil {
		return "", err
	}
	line, err := l.readLine()
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(line, "-") {
		return "", &ReplyError{Cmd: args[0], Msg: line[1:]}
	}
	return line, nil
}

// ReplyError is an error reply of the master during the handshake.
type ReplyError struct{ Cmd, Msg string }

func (e *ReplyError) Error() string { return fmt.Sprintf("%s: %s", e.Cmd, e.Msg) }

// Sync is the answer to PSYNC.
type Sync struct {
	Full   bool   // +FULLRESYNC: a payload follows
	ReplID string // the master's replication id
	Offset int64  // where the stream starts (full), or where it continues
	// RDBChannel: +RDBCHANNELSYNC <id>: the snapshot comes on an RDB
	// channel that names this link's client id at the master (MainID)
	RDBChannel bool
	MainID     string
}

// Psync sends PSYNC replid offset (and extra: FAILOVER) and reads the
// answer (+FULLRESYNC replid offset, +CONTINUE [replid]).
func (l *MasterLink) Psync(replID string, offset int64, extra ...string) (Sync, error) {
	line, err := l.Call(append([]string{"PSYNC", replID, strconv.FormatInt(offset, 10)}, extra...)...)
	if err != nil {
		return Sync{}, err
	}
	f := strings.Fields(strings.TrimPrefix(line, "+"))
	switch {
	case len(f) == 3 && f[0] == "FULLRESYNC":
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return Sync{}, fmt.Errorf("bad FULLRESYNC reply %q", line)
		}
		return Sync{Full: true, ReplID: f[1], Offset: off}, nil
	case len(f) == 2 && f[0] == "RDBCHANNELSYNC":
		return Sync{RDBChannel: true, MainID: f[1]}, nil
	case len(f) >= 1 && f[0] == "CONTINUE":
		s := Sync{ReplID: replID, Offset: offset}
		if len(f) == 2 {
			s.ReplID = f[1]
		}
		return s, nil
	}
	return Sync{}, fmt.Errorf("unexpected PSYNC reply %q", line)
}

// eofMarkLen is the length of a diskless payload's end mark.
const eofMarkLen = 40

// Payload copies the snapshot that follows +FULLRESYNC to w: a bulk of known
// length ($<len>), or a diskless one ($EOF:<40-byte mark>) that ends with its
// mark. It returns the payload's length.
func (l *MasterLink) Payload(w io.Writer) (int64, error) {
	line, err := l.readLine()
	if err != nil {
		return 0, err
	}
	if strings.HasPrefix(line, "-") {
		return 0, &ReplyError{Cmd: "SYNC", Msg: line[1:]}
	}
	if !strings.HasPrefix(line, "$") {
		return 0, fmt.Errorf("bad protocol from MASTER, the first byte is not '$' (we received '%s'), are you sure the host and port are right?", line)
	}
	if mark, ok := strings.CutPrefix(line, "$EOF:"); ok {
		if len(mark) != eofMarkLen {
			return 0, fmt.Errorf("bad EOF mark %q", mark)
		}
		return l.copyUntilMark(w, []byte(mark))
	}
	n, err := strconv.ParseInt(line[1:], 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad payload length %q", line)
	}
	var copied int64
	for copied < n {
		_ = l.conn.SetReadDeadline(time.Now().Add(l.Timeout()))
		k, err := io.CopyN(w, l.br, min(n-copied, 1<<20))
		copied += k
		if err != nil {
			return copied, err
		}
	}
	return n, nil
}

// copyUntilMark copies to w what comes before mark.
func (l *MasterLink) copyUntilMark(w io.Writer, mark []byte) (int64, error) {
	var held []byte // the last bytes read, which may be the mark's start
	var total int64
	buf := make([]byte, 64<<10)
	for {
		_ = l.conn.SetReadDeadline(time.Now().Add(l.Timeout()))
		k, err := l.br.Read(buf)
		held = append(held, buf[:k]...)
		if i := bytes.Index(held, mark); i >= 0 {
			if _, werr := w.Write(held[:i]); werr != nil {
				return total, werr
			}
			total += int64(i)
			// what followed the mark is the stream: give it back
			rest := held[i+len(mark):]
			l.br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), l.br), 64<<10)
			return total, nil
		}
		if keep := len(mark) - 1; len(held) > keep {
			if _, werr := w.Write(held[:len(held)-keep]); werr != nil {
				return total, werr
			}
			total += int64(len(held) - keep)
			held = append(held[:0], held[len(held)-keep:]...)
		}
		if err != nil {
			return total, err
		}
	}
}

// Next reads the next command of the stream: its arguments (valid until the
// next call) and the bytes it took. A read that waits longer than Timeout
// fails (the master pings every repl-ping-replica-period).
func (l *MasterLink) Next() (argv [][]byte, n int, err error) {
	if l.rd == nil {
		lim := resp.NewLimits()
		l.rd = resp.NewReader(&deadlineReader{l: l}, lim)
	}
	argv, err = l.rd.ReadCommand()
	if err != nil {
		return nil, 0, err
	}
	return argv, l.rd.LastLen(), nil
}

// Reader is the stream's reader once Next has read from it (nil before):
// to peek at the commands buffered behind the one Next returned.
func (l *MasterLink) Reader() *resp.Reader { return l.rd }

// TryNext is Next without reading: the next command if one is buffered
// whole (ok false, nil error, when none is).
func (l *MasterLink) TryNext() (argv [][]byte, n int, ok bool, err error) {
	if l.rd == nil {
		return nil, 0, false, nil
	}
	argv, ok, err = l.rd.TryCommand()
	if !ok || err != nil {
		return nil, 0, false, err
	}
	return argv, l.rd.LastLen(), true, nil
}

// deadlineReader reads the link's buffered reader with the read deadline
// renewed when it is older than a tenth of Timeout: a read that waits
// fails after 0.9 to 1 Timeout, and a busy stream does not reset a runtime
// timer for every read.
type deadlineReader struct {
	l       *MasterLink
	renewed time.Time
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	if now := time.Now(); now.Sub(d.renewed) > d.l.Timeout()/10 {
		d.renewed = now
		_ = d.l.conn.SetReadDeadline(now.Add(d.l.Timeout()))
	}
	return d.l.br.Read(p)
}

// Ack sends REPLCONF ACK offset (and FACK, the offset fsynced to the AOF,
// when aof >= 0).
func (l *MasterLink) Ack(offset, aof int64) error {
	if aof >= 0 {
		return l.Send("REPLCONF", "ACK", strconv.FormatInt(offset, 10), "FACK", strconv.FormatInt(aof, 10))
	}
	return l.Send("REPLCONF", "ACK", strconv.FormatInt(offset, 10))
}

// ErrClosed is what the link's reads return once Close was called.
var ErrClosed = errors.New("the link to the master was closed")

// SendNewline writes a newline: a replica's keep-alive while it loads a
// snapshot (replicationSendNewlineToMaster).
func (l *MasterLink) SendNewline() error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_ = l.conn.SetWriteDeadline(time.Now().Add(l.Timeout()))
	_, err := l.conn.Write([]byte{'\n'})
	return err
}

// StreamBuffer holds the stream a main channel receives while the RDB
// channel's snapshot downloads and loads (Redis's repl_full_sync_buffer).
type StreamBuffer struct {
	l     *MasterLink
	limit int64
	// Full is called once when the limit stops the reading
	Full func(limit int64)
	// Failed is called once, from the reading goroutine, when the link
	// fails before Stop (the main channel dropped during the sync)
	Failed func(err error)
	mu     sync.Mutex
	data   []byte
	peak   int64
	err    error // what ended the reading (not Stop's)
	stop   chan struct{}
	done   chan struct{}
}

// BufferStream starts reading the link's stream into memory until Stop,
// while the server loads a snapshot from elsewhere. Past limit bytes (0: no
// limit) it stops reading: the master keeps the rest (TCP's back-pressure,
// then its own output buffer limit), as Redis's replica does.
func (l *MasterLink) BufferStream(limit int64, full func(limit int64), failed func(err error)) *StreamBuffer {
	b := &StreamBuffer{l: l, limit: limit, Full: full, Failed: failed, stop: make(chan struct{}), done: make(chan struct{})}
	// no read deadline: the master sends nothing while it has nothing to
	// send; Stop ends a pending read by setting one in the past
	l.buffering.Store(true)
	_ = l.conn.SetReadDeadline(time.Time{})
	go b.run()
	return b
}

func (b *StreamBuffer) run() {
	defer close(b.done)
	buf := make([]byte, 64<<10)
	for {
		select {
		case <-b.stop:
			return
		default:
		}
		b.mu.Lock()
		full := b.limit > 0 && int64(len(b.data)) >= b.limit
		b.mu.Unlock()
		if full {
			if b.Full != nil {
				b.Full(b.limit)
			}
			<-b.stop
			return
		}
		n, err := b.l.br.Read(buf)
		b.mu.Lock()
		b.data = append(b.data, buf[:n]...)
		b.peak = max(b.peak, int64(cap(b.data)))
		b.mu.Unlock()
		if err != nil {
			select {
			case <-b.stop: // the deadline Stop set
			default:
				b.err = err
				if b.Failed != nil {
					b.Failed(err)
				}
			}
			return
		}
	}
}

// Size is the bytes held now and the most allocated (INFO's
// replica_full_sync_buffer_size and _peak).
func (b *StreamBuffer) Size() (size, peak int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return int64(cap(b.data)), b.peak
}

// Stop ends the reading and puts what was read back in front of the
// link's stream, so that Next reads it first; it returns its length and
// the error that ended the reading early, if any (the link then fails
// after the held stream is applied, and the replica resyncs from there).
func (b *StreamBuffer) Stop() (int64, error) {
	close(b.stop)
	_ = b.l.conn.SetReadDeadline(time.Now().Add(-time.Second))
	<-b.done
	_ = b.l.conn.SetReadDeadline(time.Time{})
	b.l.buffering.Store(false)
	rest := io.Reader(b.l.br)
	if b.err != nil {
		rest = errReader{b.err}
	}
	n := int64(len(b.data))
	if n > 0 || b.err != nil {
		b.l.br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(b.data), rest), 64<<10)
	}
	return n, b.err
}

// errReader fails with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
