//go:build !linux

package repl

import (
	"io"
	"net"
)

// streamReader returns what the link's buffered reader reads from.
func streamReader(conn net.Conn) io.Reader { return conn }
