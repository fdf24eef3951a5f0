//go:build !linux

package network

import (
	"crypto/tls"
	"net"
)

// Without epoll, every connection runs on its own goroutine.
const eventLoopSupported = false

type eventLoop struct{}

func shutdownFD(int) {}

func (n *Net) runLoops(int) (func(), error) { return func() {}, nil }

func (n *Net) watchListener(net.Listener) error { return nil }

// Wake has no loop to wake.
func (n *Net) Wake() bool { return false }

// PollWhileBusy has nothing to poll: without event loops, no connection
// waits on the script's goroutine.
func (c *Conn) PollWhileBusy() {}

// queuePush is never called: without event loops, Conn.loop is always nil.
func (l *eventLoop) queuePush(*Conn) {}

// handshakeForLoop: without event loops TLS connections stay on their
// goroutines.
func (n *Net) handshakeForLoop(net.Conn, *tls.Config) bool { return false }
