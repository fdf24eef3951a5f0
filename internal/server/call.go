package server

import (
	"fmt"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/introspect"
)

// Where a command runs. Every command, whoever issues it, is admitted by admit
// (admit.go) and runs through call, here: a client's command (dispatch), each
// command of an EXEC, each redis.call of a script or function, a blocked
// client's command when its keys are ready or its timeout passes, a command
// allowed while a script is busy, and a command of a unit applied without a
// connection (apply.go). call is the only place that invokes
// a handler (Spec.Run); internal/archtest fails if another appears.

// origin says who issues a command: the one thing admit and call are told
// about their caller.
type origin uint8

const (
	// fromClient: a client's command (Redis's processCommand, then call).
	fromClient origin = iota
	// fromBusy: a client's command while a script is busy (past
	// busy-reply-threshold): only allow-busy commands are admitted, and they
	// touch no key; the script's execution unit is still open.
	fromBusy
	// fromExec: a command of EXEC's queue, inside EXEC's unit.
	fromExec
	// fromScript: redis.call or redis.pcall of a script or function, inside
	// the script's unit (Redis's scriptCall).
	fromScript
	// fromBlocked: a blocked client's command run again, a unit of its own.
	fromBlocked
	// fromApply: a command of a unit applied without a connection (Apply:
	// a replica's stream, the AOF, a Raft log), inside the applied unit.
	fromApply
)

// call runs one admitted command, in Redis's call() order: the handler with the
// frozen time c.Now, then the command's propagation (it joins the unit of the
// outermost command, handed to the targets when that one ends), the keys it
// read remembered for client-side caching, and its statistics. The caller has
// set c's Argv, Client, W, DB and Now (and NoBlock, FrozenUs); startUs is when
// the command started (the batch clock of a client, so that the clock is read
// once per command). It returns the time the command ended. Nesting (EXEC's
// commands and a script's run inside their unit) is call's own: the first call
// of a unit opens it and the same call closes it.
//
// A command that parks its client (c.Parked) is counted once, when it is
// served or times out, as Redis's updateStatsOnUnblock does. Engine lock held.
func (s *Server) call(o origin, c *command.Ctx, spec *command.Spec, startUs int64) (endUs int64) {
	c.Spec, c.ErrCode, c.Dirty, c.FailedNoStats, c.Parked, c.ReplyLast = spec, "", 0, false, false, false
	c.Redacted, c.StartUs = c.Redacted[:0], startUs
	if o != fromBusy { // a busy script's unit keeps its frozen time and tracking state
		s.eng.BeginAt(c.Now)
		s.trk.BeginCommand()
	}
	unitEnd, seq := s.repl.UnitEnd(), s.barrier.seq.Load()
	var hot *introspect.Hotkeys
	hotOut := 0
	if observing && s.obs.every {
		hot, hotOut = s.observeBefore(o, c, spec)
	}
	s.propBegin(c, spec)
	s.run(c, spec)
	if c.Dirty != 0 && s.barrier.on && spec.Flags&command.RunsCommands == 0 {
		s.markKeysDirty(c, spec)
	}
	s.propEnd(c, spec)
	if o == fromClient && (s.repl.UnitEnd() != unitEnd || s.barrier.seq.Load() != seq) {
		// what a WAIT of this client waits for (Redis's c->woff): the stream
		// up to the end of its own command's unit; WAITAOF, that unit
		// (s.cur: the client dispatch runs the command for, without
		// clientOf's lock and map lookup on every write)
		if cl := s.cur; cl != nil {
			cl.woff = s.repl.UnitEnd()
			cl.wseq = s.barrier.seq.Load()
		}
	}
	s.trk.Remember(spec, c.Argv)
	endUs = s.clock.NowUs()
	s.stats.dirty += int64(c.Dirty)
	if c.Dirty != 0 && o != fromApply && s.rs.host != "" {
		s.noteOwnKeys(c, spec) // a writable replica's own keys
	}
	if observing {
		if s.locks.Busy() {
			s.noteLocks(o, endUs)
		}
		// one test for the rest: nobody watches every command (floorUs
		// is MinInt64 while someone does), and the command was quicker
		// than anything the slow log or the latency monitor records
		if endUs-startUs >= s.obs.floorUs {
			s.observeAfter(o, c, spec, hot, hotOut, endUs-startUs)
		}
	}
	if c.Parked {
		return endUs
	}
	if s.cur != nil {
		s.cur.cmdsDone++ // CLIENT LIST tot-cmds: its scripts' and EXEC's commands too
	}
	st := &s.cmdStats[spec.ID]
	st.calls++
	st.usec += endUs - startUs
	if observing && s.latencyTracking.Load() {
		s.latency[spec.ID].record(endUs - startUs)
	}
	s.stats.commands++
	if c.ErrCode != "" {
		st.failed++
		s.countError(c.ErrCode)
	} else if c.FailedNoStats {
		st.failed++
	}
	return endUs
}

// run calls the handler. A panic in a handler is a HotKV bug: it is logged with its
// stack, the client gets an error in place of the partial reply, and the server
// and every other client go on (the engine lock stays held by the caller).
func (s *Server) run(c *command.Ctx, spec *command.Spec) {
	mark := len(c.W.Buf)
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("command panicked: this is a HotKV bug, please report it",
				"command", spec.FullName(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			c.W.Truncate(mark)
			c.Error("ERR internal error in '" + spec.FullName() + "': the command was aborted")
		}
	}()
	spec.Run(c)
	if s.mem.settled { // the command reported used memory: its text is garbage
		s.forgetReportGarbage()
	}
}

// errStatsMax is how many kinds of error INFO errorstats counts (Redis's
// ERROR_STATS_NUMBER).
const errStatsMax = 128

// countError counts an error reply in INFO errorstats. As Redis's
// incrementErrorCount, a kind of error past the 128th turns errorstats off
// until CONFIG RESETSTAT: the kinds are logged and dropped (freed in the
// background: lazyfreed_objects), and ERRORSTATS_DISABLED alone is shown.
func (s *Server) countError(code string) {
	s.stats.errorReplies++
	if s.errStatsOff {
		return
	}
	if _, ok := s.errStats[code]; !ok && len(s.errStats) >= errStatsMax {
		codes := make([]string, 0, len(s.errStats))
		for c := range s.errStats {
			codes = append(codes, c)
		}
		sort.Strings(codes) // the radix tree's order
		s.log.Warn("Errorstats stopped adding new errors because the number of " +
			"errors reached the limit, may be misuse of lua error_reply, " +
			"please check INFO ERRORSTATS, this can be re-enabled via " +
			"CONFIG RESETSTAT.")
		s.log.Warn("Current errors code list: " + strings.Join(codes, ", "))
		s.ks.Stats.LazyFreed += int64(len(s.errStats))
		s.errStats = map[string]int64{"ERRORSTATS_DISABLED": 1}
		s.errStatsOff = true
		return
	}
	s.errStats[code]++
}
