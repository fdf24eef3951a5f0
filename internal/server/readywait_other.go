//go:build !unix

package server

import (
	"io"
	"net"
)

// readSource: without a portable way to wait for input, a goroutine-mode
// Reader reads conn itself and keeps its buffer for life.
func readSource(conn net.Conn) io.Reader { return conn }
