package cli

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"
)

// Conn is one connection to the server: commands go out as RESP arrays,
// replies come back parsed. It is used by one goroutine at a time.
type Conn struct {
	nc net.Conn
	br *bufio.Reader
	bw *bufio.Writer
	// Err is the first I/O error; the connection is unusable after it.
	Err error
}

// Dial connects to addr ("host:port") or, when socket is set, to that unix
// socket.
func Dial(addr, socket string) (*Conn, error) {
	var nc net.Conn
	var err error
	if socket != "" {
		nc, err = net.Dial("unix", socket)
	} else {
		nc, err = net.DialTimeout("tcp", addr, 10*time.Second)
	}
	if err != nil {
		return nil, connectError(err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetKeepAlive(true)
		_ = tc.SetKeepAlivePeriod(15 * time.Second)
	}
	return &Conn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10), bw: bufio.NewWriterSize(nc, 64<<10)}, nil
}

// connectError turns a dial error into hiredis's short text
// ("Connection refused").
func connectError(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errors.New(capitalize(errno.Error()))
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return errors.New(dnsErr.Err)
	}
	return err
}

func capitalize(s string) string {
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Append buffers one command; Flush sends the buffered commands.
func (c *Conn) Append(args []string) {
	b := c.bw
	b.WriteByte('*')
	b.WriteString(strconv.Itoa(len(args)))
	b.WriteString("\r\n")
	for _, a := range args {
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(len(a)))
		b.WriteString("\r\n")
		b.WriteString(a)
		b.WriteString("\r\n")
	}
}

// Flush writes the buffered commands.
func (c *Conn) Flush() error {
	if c.Err != nil {
		return c.Err
	}
	if err := c.bw.Flush(); err != nil {
		c.Err = ioError(err)
	}
	return c.Err
}

// Read reads the next reply.
func (c *Conn) Read() (*Reply, error) {
	if c.Err != nil {
		return nil, c.Err
	}
	r, err := ReadReply(c.br)
	if err != nil {
		c.Err = ioError(err)
		return nil, c.Err
	}
	return r, nil
}

// Do sends one command and reads its reply, discarding any RESP3 push that
// arrives first.
func (c *Conn) Do(args ...string) (*Reply, error) {
	c.Append(args)
	if err := c.Flush(); err != nil {
		return nil, err
	}
	for {
		r, err := c.Read()
		if err != nil || r.Kind != KindPush {
			return r, err
		}
	}
}

// ioError gives errors hiredis's wording.
func ioError(err error) error {
	var pe *ProtocolError
	if errors.As(err, &pe) || errors.Is(err, ErrServerClosed) {
		return err
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errors.New(capitalize(errno.Error()))
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errors.New("Resource temporarily unavailable")
	}
	return err
}
