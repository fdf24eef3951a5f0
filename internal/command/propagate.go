package command

import "strconv"

// Command propagation: the write effects of an execution unit, as commands whose
// replay on another server (a replica, the AOF, a Raft log) gives the same data
// (Redis's call() + alsoPropagate + propagatePendingCommands; docs/ARCHITECTURE.md §4).
//
// The server owns one Propagation and points Ctx.Prop at it only while something
// listens (a replica is attached, later the AOF): with nobody listening Ctx.Prop is
// nil and every method below returns at once, so the hot path pays one nil check.
//
// Rules, as in Redis:
//   - a command that changed the dataset (Dirty > 0 after it ran) propagates its
//     argv as received, unless it called PropagateAs (the replacement is
//     propagated instead) or PreventPropagation;
//   - ForcePropagation propagates the argv even when Dirty is 0 (PUBLISH,
//     FLUSHALL on an empty server);
//   - AlsoPropagate adds a separate command at this point of the unit (SPOP's
//     SREM batches; the server adds lazy-expire DELs the same way);
//   - the server wraps a unit of several commands in MULTI/EXEC.

// Propagation targets (Redis's PROPAGATE_AOF / PROPAGATE_REPL).
const (
	PropAOF  uint8 = 1 << iota // the append-only file (and a future Raft log)
	PropRepl                   // replicas
	PropAll  = PropAOF | PropRepl
)

type span struct{ off, n int32 }

// PropOp is one propagated command: the database it runs in and its arguments
// (Args), for the targets in Targets.
type PropOp struct {
	DB      int
	Targets uint8
	first   int32 // index of the first argument in Propagation.spans
	argc    int32
}

// Propagation collects the commands of one execution unit. It is not safe for
// concurrent use: it lives under the engine lock. Nothing it hands out survives
// Reset.
type Propagation struct {
	ops   []PropOp
	spans []span
	arena []byte
	num   []byte // scratch for Int

	// the running command's own propagation (reset by BeginCall)
	replaced  bool
	replFirst int32
	replArgc  int32
	prevented bool
	forced    uint8
}

// Len is the number of commands collected so far.
func (p *Propagation) Len() int { return len(p.ops) }

// Op returns command i.
func (p *Propagation) Op(i int) PropOp { return p.ops[i] }

// Args appends the arguments of op to dst (slices into p's buffer, valid until
// Reset) and returns it.
func (p *Propagation) Args(dst [][]byte, op PropOp) [][]byte {
	for _, s := range p.spans[op.first : op.first+op.argc] {
		dst = append(dst, p.arena[s.off:s.off+s.n:s.off+s.n])
	}
	return dst
}

// Reset empties p for the next execution unit, keeping its buffers.
func (p *Propagation) Reset() {
	p.ops, p.spans, p.arena, p.num = p.ops[:0], p.spans[:0], p.arena[:0], p.num[:0]
	p.BeginCall()
}

// BeginCall forgets the previous command's PropagateAs/Prevent/Force: the server
// calls it before each command of the unit.
func (p *Propagation) BeginCall() {
	p.replaced, p.prevented, p.forced = false, false, 0
}

// store copies argv into the arena and returns its first span index.
func (p *Propagation) store(argv [][]byte) int32 {
	first := int32(len(p.spans))
	for _, a := range argv {
		p.spans = append(p.spans, span{int32(len(p.arena)), int32(len(a))})
		p.arena = append(p.arena, a...)
	}
	return first
}

// Add appends a command for db (Redis's alsoPropagate). argv is copied.
func (p *Propagation) Add(db int, targets uint8, argv ...[]byte) {
	first := p.store(argv)
	p.ops = append(p.ops, PropOp{DB: db, Targets: targets, first: first, argc: int32(len(argv))})
}

// EndCall records the command that just ran in db with argv (as received) and
// dirty changes: its replacement, or argv, when it changed something or forced
// propagation, unless it prevented it (Redis's call() tail).
func (p *Propagation) EndCall(db int, argv [][]byte, dirty int) {
	targets := p.forced
	if dirty > 0 {
		targets = PropAll
	}
	if p.prevented || targets == 0 {
		p.BeginCall()
		return
	}
	if p.replaced {
		p.ops = append(p.ops, PropOp{DB: db, Targets: targets, first: p.replFirst, argc: p.replArgc})
	} else {
		p.Add(db, targets, argv...)
	}
	p.BeginCall()
}

// Propagating reports whether anything listens to the command's effects: a
// handler may skip building a rewrite when it does not.
func (c *Ctx) Propagating() bool { return c.Prop != nil }

// PropagateAs replaces the command's own propagated form with argv (copied),
// e.g. SET ... EX 10 as SET ... PXAT <ms> (Redis's rewriteClientCommandVector).
// It is propagated only if the command is dirty (or forced), after any
// AlsoPropagate of the same command.
func (c *Ctx) PropagateAs(argv ...[]byte) {
	p := c.Prop
	if p == nil {
		return
	}
	p.replFirst = p.store(argv)
	p.replArgc = int32(len(argv))
	p.replaced = true
}

// AlsoPropagate adds argv (copied) as a separate command in the client's
// database at this point of the execution unit (Redis's alsoPropagate).
func (c *Ctx) AlsoPropagate(argv ...[]byte) {
	if p := c.Prop; p != nil {
		p.Add(c.DB.ID, PropAll, argv...)
	}
}

// PreventPropagation keeps the command's own argv out of the stream (Redis's
// preventCommandPropagation); what it added with AlsoPropagate stays.
func (c *Ctx) PreventPropagation() {
	if p := c.Prop; p != nil {
		p.prevented = true
	}
}

// ForcePropagation propagates the command to targets even if it changed
// nothing (Redis's forceCommandPropagation: PUBLISH to replicas, FLUSHALL).
func (c *Ctx) ForcePropagation(targets uint8) {
	if p := c.Prop; p != nil {
		p.forced |= targets
	}
}

// PropInt formats n for a PropagateAs/AlsoPropagate argument (nil when nothing
// listens). The slice stays valid until the unit ends.
func (c *Ctx) PropInt(n int64) []byte {
	p := c.Prop
	if p == nil {
		return nil
	}
	start := len(p.num)
	p.num = strconv.AppendInt(p.num, n, 10)
	return p.num[start:len(p.num):len(p.num)]
}

// configYes reports whether the boolean parameter name is "yes" (for rewrites
// that depend on lazyfree-*; only called while propagating).
func configYes(c *Ctx, name string) bool {
	if c.Srv == nil {
		return false
	}
	kv := c.Srv.ConfigGet([]string{name})
	return len(kv) == 1 && kv[0][1] == "yes"
}
