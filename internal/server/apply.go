package server

import (
	"bytes"
	"net"

	"github.com/hotkv/hotkv/internal/command"
)

// Unit is one execution unit of commands to run without a connection: what
// a replica receives from its master, the AOF loader reads, or a Raft
// follower takes from its log. Its commands come without the MULTI/EXEC that
// wraps a unit of several in the propagated stream (UnitsFromStream).
type Unit struct {
	DB    int        // the database selected when the unit starts
	Cmds  [][][]byte // the commands, argv each
	NowMs int64      // the frozen time the unit runs with (Unix ms)
	Seed  uint64     // the seed of the random source the unit draws from
	Proto int        // the protocol of the replies: 2 (default) or 3
}

// Applied is what Apply returns.
type Applied struct {
	Replies []byte // every command's reply, in order
	DB      int    // the database selected when the unit ended
}

// Apply runs u through call() as one execution unit, with a client that has
// no connection (Redis's fake client of the AOF loader, its master link):
// the commands are not admitted again (they were, where they first ran), the
// time is u.NowMs for all of them, the random source starts from u.Seed, and
// blocking commands answer at once as on timeout. Their effects propagate as
// one unit, as any unit's do; the clients their writes serve are served after
// it. A command that needs a connection (MULTI, EXEC, WATCH, (un)subscribing,
// QUIT, RESET) is answered with an error and does nothing; so is an unknown
// command or a wrong number of arguments.
//
// Parse is pure and apply deterministic: two servers made with the same seed
// that apply the same units give the same replies and the same dataset (the
// determinism test). Apply takes the engine lock.
func (s *Server) Apply(u Unit) Applied {
	s.eng.Lock()
	defer s.eng.Unlock()
	a := s.applyLocked(u)
	a.Replies = append([]byte(nil), a.Replies...)
	s.applier.w.Reset()
	return a
}

// applyLocked is Apply with the engine lock held; the replies are the apply
// client's buffer, valid until the next unit.
func (s *Server) applyLocked(u Unit) Applied {
	cl := s.applyClient()
	cl.DB = u.DB
	cl.Proto = max(u.Proto, 2)
	cl.w.Proto = cl.Proto
	cl.w.Reset()
	c := &cl.ctx
	s.eng.Reseed(u.Seed)
	s.unitBegin()
	for _, argv := range u.Cmds {
		spec, v, refusal := s.admit(fromApply, cl, argv, nil)
		if v != admitted {
			c.Error(refusal)
			continue
		}
		c.Argv, c.DB, c.Now, c.NoBlock = argv, s.ks.DBs[cl.DB], u.NowMs, false
		s.call(fromApply, c, spec, s.clock.NowUs())
	}
	s.unitEnd()
	if len(s.blocked.ready) > 0 {
		s.serveReady()
	}
	return Applied{Replies: cl.w.Buf, DB: cl.DB}
}

// applyClient is the connection-less client Apply runs units as, made once.
// It is in no registry: the connection commands find no client for it.
func (s *Server) applyClient() *client {
	if s.applier == nil {
		cl := &client{raddr: applyAddr{}, srv: s}
		cl.ID = applyClientID
		cl.Addr, cl.LAddr = applyAddr{}.String(), applyAddr{}.String()
		cl.User, cl.Authenticated, cl.Multi = nil, true, -1 // nil: runs anything, as Redis's AOF client
		cl.DenyBlocking = true
		// no Locks: a unit applied without a connection takes no lock in
		// the view (decision 0049); its changes to held keys are judged
		cl.ctx = command.Ctx{W: &cl.w, Client: &cl.Client, KS: s.ks, Srv: s, Rand: s.eng.Rand}
		s.applier = cl
	}
	return s.applier
}

// applyClientID is the apply client's id: no connection has it (Redis's
// CLIENT_ID_AOF is likewise out of the connections' range).
const applyClientID = -2

// applyAddr is the apply client's address.
type applyAddr struct{}

func (applyAddr) Network() string { return "apply" }
func (applyAddr) String() string  { return "apply:0" }

var _ net.Addr = applyAddr{}

// admitApply is the little Apply checks: the command exists, has its
// arguments, and needs no connection.
func (s *Server) admitApply(argv [][]byte) (*command.Spec, verdict, string) {
	spec, unknown := s.lookup(argv)
	if spec == nil {
		return nil, refused, unknown
	}
	switch {
	case !command.CheckArity(spec.Arity, len(argv)) || spec.Run == nil:
		return spec, refused, s.refuse(spec, command.ErrArity(spec.FullName()))
	case spec.Flags&(command.RunsInMulti|command.PushReply) != 0:
		return spec, refused, s.refuse(spec, "ERR '"+spec.FullName()+"' needs a connection: it cannot be applied")
	}
	return spec, admitted, ""
}

var wordMulti, wordExec = argvMulti[0], argvExec[0]

// UnitsFromStream groups a propagated stream (Redis's replication stream or
// AOF: SELECT, MULTI ... EXEC, single commands) into units: MULTI ... EXEC is
// one unit without its MULTI and EXEC, any other command a unit of its own.
// SELECT stays a command of the stream: Apply runs it, and the next unit
// starts in the database the previous one ended in (Applied.DB). An
// unterminated MULTI at the end is dropped, as a replica drops a transaction
// its master did not finish.
func UnitsFromStream(stream [][][]byte) [][][][]byte {
	var units [][][][]byte
	var tx [][][]byte
	inTx := false
	for _, argv := range stream {
		switch {
		case len(argv) == 1 && bytes.EqualFold(argv[0], wordMulti) && !inTx:
			inTx, tx = true, nil
		case len(argv) == 1 && bytes.EqualFold(argv[0], wordExec) && inTx:
			inTx = false
			units = append(units, tx)
		case inTx:
			tx = append(tx, argv)
		default:
			units = append(units, [][][]byte{argv})
		}
	}
	return units
}
