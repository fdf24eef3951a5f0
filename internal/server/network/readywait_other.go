//go:build !unix

package network

import (
	"io"
	"net"
)

// readSource: without a portable way to wait for input, a goroutine-mode
// Reader reads conn itself, so it takes a buffer before it waits.
func readSource(conn net.Conn, in countIn) io.Reader { return countedReader{r: conn, in: in} }
