package server

import (
	"github.com/hotkv/hotkv/internal/command"
)

// Command propagation (decisions/0023): every execution unit — a command, an
// EXEC, a script, a blocked command served, one key deleted by the active expiry
// cycle or by eviction — ends by handing its write effects, as commands, to the
// propagation targets (replicas today; the AOF and a Raft log later), as Redis's
// call() / alsoPropagate / propagatePendingCommands do:
//
//   - commands run nested (an EXEC's, a script's) add to the unit of the
//     outermost one; the unit is handed over when the outermost one ends;
//   - a unit of several commands is wrapped in MULTI ... EXEC, except when the
//     outermost command touches arbitrary keys (SCAN, RANDOMKEY: their
//     lazy-expire DELs are independent, as active expiry's are);
//   - a key deleted by lazy expiry adds DEL (UNLINK with lazyfree-lazy-expire)
//     to the running unit; outside any unit (the active expiry cycle, eviction
//     before a command) it is a unit of its own.
//
// With no target the server leaves Ctx.Prop nil, and the whole mechanism costs
// a counter per command.

// PropagationTarget receives the propagated stream, one command at a time, in
// order, under the engine lock. db is the database the command runs in, or -1
// for MULTI, EXEC and PING, which belong to none. argv is valid only during the
// call. UnitDone follows the last command of each unit (a place to flush).
type PropagationTarget interface {
	Propagate(db int, argv [][]byte)
	UnitDone()
}

type propTarget struct {
	t       PropagationTarget
	targets uint8 // command.PropAOF, command.PropRepl
}

// propState is the server's propagation state; engine lock.
type propState struct {
	buf       command.Propagation
	targets   []propTarget
	nesting   int  // commands running (EXEC and scripts nest)
	arbitrary bool // the outermost command touches arbitrary keys: no MULTI/EXEC
	argv      [][]byte
}

var (
	argvMulti = [][]byte{[]byte("MULTI")}
	argvExec  = [][]byte{[]byte("EXEC")}
	wordDel   = []byte("DEL")
	wordUnlnk = []byte("UNLINK")
	wordHDel  = []byte("HDEL")
)

// AddPropagationTarget subscribes t to the stream of the given targets
// (command.PropAOF, command.PropRepl). Call with the engine lock held.
func (s *Server) AddPropagationTarget(t PropagationTarget, targets uint8) {
	s.prop.targets = append(s.prop.targets, propTarget{t, targets})
}

// RemovePropagationTarget unsubscribes t. Call with the engine lock held.
func (s *Server) RemovePropagationTarget(t PropagationTarget) {
	ts := s.prop.targets
	for i := range ts {
		if ts[i].t == t {
			s.prop.targets = append(ts[:i], ts[i+1:]...)
			return
		}
	}
}

// propBuf is what Ctx.Prop points to: nil when nothing listens.
func (s *Server) propBuf() *command.Propagation {
	if len(s.prop.targets) == 0 {
		return nil
	}
	return &s.prop.buf
}

// propBegin enters a command (nested or not). Engine lock held.
func (s *Server) propBegin(c *command.Ctx, spec *command.Spec) {
	c.Prop = s.propBuf()
	arbitrary := spec.Flags&command.TouchesArbitraryKeys != 0
	if s.prop.nesting == 0 && c.Prop != nil {
		s.prop.arbitrary = arbitrary
	}
	if s.prop.nesting > 0 && arbitrary && !s.cfg.Bool("lazyexpire-nested-arbitrary-keys") {
		s.ks.KeepExpired = true // confAllowsExpireDel: no lazy-expire DELs from here
	}
	s.prop.nesting++
	if c.Prop != nil {
		c.Prop.BeginCall()
	}
}

// propEnd leaves a command: its own propagation (its argv, or what it asked
// for) joins the unit, and the outermost command hands the unit over.
func (s *Server) propEnd(c *command.Ctx, spec *command.Spec) {
	if p := c.Prop; p != nil && p == s.propBuf() {
		// EXEC and the script commands propagate the effects of the
		// commands they run, never themselves (Redis's call() skips
		// execCommand; evalGenericCommand calls preventCommandPropagation)
		if spec.Flags&command.RunsCommands == 0 {
			p.EndCall(c.DB.ID, c.Argv, c.Dirty)
		} else {
			p.BeginCall()
		}
	}
	s.ks.KeepExpired = false
	s.prop.nesting--
	if s.prop.nesting == 0 {
		s.closeUnit()
	}
}

// unitBegin opens an execution unit that is not itself a command (Apply's):
// the commands called until unitEnd join it. Engine lock held.
func (s *Server) unitBegin() { s.prop.nesting++ }

// unitEnd closes the unit unitBegin opened and, the outermost, hands its
// propagation over.
func (s *Server) unitEnd() {
	s.prop.nesting--
	if s.prop.nesting == 0 {
		s.closeUnit()
	}
}

// closeUnit ends the outermost unit: its propagation is handed over, then
// the clients it pushed messages to carry its number (barrier.go).
func (s *Server) closeUnit() {
	s.propFlush()
	if len(s.barrier.pend) > 0 || s.barrier.allPend {
		s.numberDirty()
	}
	if len(s.barrier.pushed) > 0 {
		s.unitEnded()
	}
}

// propDeletion adds the implicit deletion of key (expiry, eviction) to the
// running unit, or hands it over at once outside any unit (Redis's
// propagateDeletion + postExecutionUnitOperations).
// lazyParam names the lazyfree parameter that turns the DEL into UNLINK.
func (s *Server) propDeletion(db int, key []byte, lazyParam string) {
	if len(s.prop.targets) == 0 {
		return
	}
	verb := wordDel
	if s.cfg.Bool(lazyParam) {
		verb = wordUnlnk
	}
	s.prop.buf.Add(db, command.PropAll, verb, key)
	if s.prop.nesting == 0 {
		s.prop.arbitrary = false
		s.closeUnit()
	}
}

// propFlush hands the unit's commands to the targets, wrapped in MULTI/EXEC when
// there are several, and empties it.
func (s *Server) propFlush() {
	p := &s.prop.buf
	n := p.Len()
	if n == 0 {
		return
	}
	if len(s.prop.targets) == 0 {
		p.Reset()
		return
	}
	wrap := n > 1 && !s.prop.arbitrary
	s.noteUnitHanded()
	for _, t := range s.prop.targets {
		sent := 0
		for i := 0; i < n; i++ {
			op := p.Op(i)
			if op.Targets&t.targets == 0 {
				continue
			}
			if wrap && sent == 0 {
				t.t.Propagate(-1, argvMulti)
				sent++
			}
			sent++
			s.prop.argv = p.Args(s.prop.argv[:0], op)
			t.t.Propagate(op.DB, s.prop.argv)
		}
		if wrap && sent > 0 {
			t.t.Propagate(-1, argvExec)
			sent++
		}
		if sent > 0 {
			t.t.UnitDone()
			if t.targets == command.PropAOF {
				s.repl.CountAOF(sent) // master_repl_offset without replicas
			}
		}
	}
	clear(s.prop.argv)
	p.Reset()
	s.prop.arbitrary = false
}
