package server

import (
	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/server/tracking"
)

// Client-side caching is internal/server/tracking; this file wires it to the
// server: the clients as tracking.Client, the server as tracking.Host, and
// CLIENT TRACKING's registry. Engine lock held throughout.

// Base implements tracking.Client.
func (cl *client) Base() *command.Client { return &cl.Client }

// Push implements tracking.Client.
func (cl *client) Push(msg []byte) { cl.pushMsg(msg) }

// HasSubscriptions implements tracking.Client.
func (cl *client) HasSubscriptions() bool { return cl.subscriptions() > 0 }

// trackingHost is the server as tracking.Host.
type trackingHost Server

func (h *trackingHost) Client(id int64) tracking.Client {
	if cl := (*Server)(h).lookupClient(id); cl != nil {
		return cl
	}
	return nil
}

func (h *trackingHost) Clients() []tracking.Client {
	cls := (*Server)(h).sortedClients()
	out := make([]tracking.Client, len(cls))
	for i, cl := range cls {
		out[i] = cl
	}
	return out
}

func (h *trackingHost) Present(db int, key []byte) bool {
	present, _ := h.ks.DBs[db].Present(key)
	return present
}

func (h *trackingHost) InScript() bool { return h.scripts.depth > 0 }

func (h *trackingHost) Rand() uint64 { return h.eng.Rand() }

// Tracking is the registry CLIENT TRACKING uses.
func (s *Server) Tracking() command.Tracking { return (*trackingAPI)(s) }

type trackingAPI Server

// ClientExists implements REDIRECT's check (lookupClientByID).
func (api *trackingAPI) ClientExists(id int64) bool { return (*Server)(api).lookupClient(id) != nil }

// Enable is Redis's enableTracking.
func (api *trackingAPI) Enable(c *command.Client, redirect int64, bcast, optIn, optOut, noLoop bool, prefixes [][]byte) {
	s := (*Server)(api)
	if cl := s.clientOf(c); cl != nil {
		s.trk.Enable(cl, redirect, bcast, optIn, optOut, noLoop, prefixes)
	}
}

// Disable is Redis's disableTracking.
func (api *trackingAPI) Disable(c *command.Client) {
	s := (*Server)(api)
	if cl := s.clientOf(c); cl != nil {
		s.trk.Disable(cl)
	}
}

// lookupClient is Redis's lookupClientByID.
func (s *Server) lookupClient(id int64) *client {
	s.mu.Lock()
	cl := s.clients[id]
	s.mu.Unlock()
	return cl
}

// trackAfterCommand is called by process after cl's command, its reply
// written (also when the command was refused or queued by MULTI): the
// messages due (tracking.Tracker.AfterExec) go straight after its reply, as
// its own output; then the command ends for tracking.
func (s *Server) trackAfterCommand(cl *client, spec *command.Spec) {
	if s.trk.AfterExec() {
		cl.push.running = true
		s.trk.SendDue(cl)
		cl.push.running = false
	}
	s.trk.EndCommand(&cl.Client, spec)
}
