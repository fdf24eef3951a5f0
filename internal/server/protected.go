package server

import "github.com/hotkv/hotkv/internal/server/network"

// protectedModeRefuses is protected mode (clientAcceptHandler): with
// protected-mode yes and a default user that needs no password, only
// loopback and Unix socket clients are served; the others get Redis's
// DENIED explanation and are closed. Any goroutine.
func (s *Server) protectedModeRefuses(nc *network.Conn) bool {
	if !s.cfg.Bool("protected-mode") || !s.acl.DefaultOpen() {
		return false
	}
	return !isLocal(nc.RemoteAddr()) // loopback or a Unix socket (connIsLocal)
}

var errProtectedMode = []byte("-DENIED Redis is running in protected mode because protected " +
	"mode is enabled and no password is set for the default user. " +
	"In this mode connections are only accepted from the loopback interface. " +
	"If you want to connect from external computers to Redis you " +
	"may adopt one of the following solutions: " +
	"1) Just disable protected mode sending the command " +
	"'CONFIG SET protected-mode no' from the loopback interface " +
	"by connecting to Redis from the same host the server is " +
	"running, however MAKE SURE Redis is not publicly accessible " +
	"from internet if you do so. Use CONFIG REWRITE to make this " +
	"change permanent. " +
	"2) Alternatively you can just disable the protected mode by " +
	"editing the Redis configuration file, and setting the protected " +
	"mode option to 'no', and then restarting the server. " +
	"3) If you started the server manually just for testing, restart " +
	"it with the '--protected-mode no' option. " +
	"4) Set up an authentication password for the default user. " +
	"NOTE: You only need to do one of the above things in order for " +
	"the server to start accepting connections from the outside.\r\n")
