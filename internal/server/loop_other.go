//go:build !linux

package server

import "net"

// Without epoll, every connection runs on its own goroutine.
const eventLoopSupported = false

type eventLoop struct{}

func shutdownFD(int) {}

func (s *Server) runLoops(int) (func(), error) { return func() {}, nil }

func (s *Server) watchListener(net.Listener) error { return nil }

func (s *Server) whileBlocked(*scriptState) {}

// queuePush is never called: without event loops, cl.loop is always nil.
func (l *eventLoop) queuePush(*client) {}
