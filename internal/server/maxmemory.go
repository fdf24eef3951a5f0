package server

import "github.com/hotkv/hotkv/internal/command"

// maxmemory: commands that may grow memory (denyoom) are refused with Redis's
// OOM error while used memory is over maxmemory. HotKV does not evict yet, so
// every policy behaves as noeviction does (Redis replies the same OOM when its
// eviction cannot free enough).
//
// Used memory is the Go heap's live objects (runtime/metrics, no stop-the-world),
// read at most once a millisecond and only while maxmemory is set, so the check
// costs nothing when maxmemory is 0 (the default).

const errOOM = "OOM command not allowed when used memory > 'maxmemory'."

// outOfMemory reports whether used memory is over maxmemory (Redis's
// performEvictions returning EVICT_FAIL). Engine lock held.
func (s *Server) outOfMemory() bool {
	maxmem := s.maxmemory()
	if maxmem == 0 {
		return false
	}
	now := s.clock.NowUs()
	if now-s.memSampleUs >= 1000 || s.memSample == 0 {
		s.memSample = heapBytes()
		s.memSampleUs = now
	}
	return s.memSample > maxmem
}

func (s *Server) maxmemory() uint64 { return uint64(s.cfg.Int("maxmemory")) }

// rejectOnOOM is processCommand's OOM rule: denyoom commands (and, inside MULTI,
// every command but EXEC, DISCARD, QUIT and RESET, since queuing grows memory)
// are refused when out of memory. It records the state for scripts
// (pre_command_oom_state).
func (s *Server) rejectOnOOM(cl *client, spec *command.Spec) bool {
	s.preCommandOOM = false
	if s.maxmemory() == 0 {
		return false
	}
	deny := spec.Flags&command.DenyOOM != 0 || (spec.Name == "exec" && cl.multi.flags&command.DenyOOM != 0)
	if cl.InMulti() {
		switch spec.Name {
		case "exec", "discard", "quit", "reset":
		default:
			deny = true
		}
	}
	if !deny && !scriptMayDenyOOM(spec) {
		return false
	}
	oom := s.outOfMemory()
	s.preCommandOOM = oom
	return oom && deny
}

// scriptMayDenyOOM: EVAL and FCALL check the state at start (their flags
// depend on the script's shebang).
func scriptMayDenyOOM(spec *command.Spec) bool {
	switch spec.Name {
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro":
		return true
	}
	return false
}
