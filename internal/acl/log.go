package acl

// LogEntry is one ACL LOG entry.
type LogEntry struct {
	Count      int64
	Reason     Reason
	Context    Context
	Object     string // the command, key, channel, or AUTH
	Username   string
	Ctime      int64  // Unix ms of the last update
	ClientInfo string // the CLIENT INFO line of the last client
	EntryID    int64
	Created    int64 // Unix ms
}

// ReasonName is the entry's "reason" field.
func (e *LogEntry) ReasonName() string {
	switch e.Reason {
	case DeniedCmd:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedChannel:
		return "channel"
	case DeniedAuth:
		return "auth"
	case DeniedTLSCert:
		return "tls-cert"
	}
	return "unknown"
}

// ContextName is the entry's "context" field.
func (e *LogEntry) ContextName() string {
	switch e.Context {
	case CtxToplevel:
		return "toplevel"
	case CtxMulti:
		return "multi"
	case CtxLua:
		return "lua"
	case CtxModule:
		return "module"
	}
	return "unknown"
}

// Log is the ACL log, newest entry first.
type Log struct {
	Entries []*LogEntry
	next    int64 // the next entry's id (ACLLogEntryCount)
}

// logGroupMs is how close in time two similar events must be to share an
// entry (ACL_LOG_GROUPING_MAX_TIME_DELTA).
const logGroupMs = 60000

// Add records a denial (addACLLogEntry): counted in Stats always, logged
// when maxLen > 0, into a recent similar entry when one of the ten newest
// matches.
func (a *ACL) Add(r Reason, ctx Context, object, username, clientInfo string, nowMs int64, maxLen int) {
	switch r {
	case DeniedAuth:
		a.Stats.Auth++
	case DeniedCmd:
		a.Stats.Cmd++
	case DeniedKey:
		a.Stats.Key++
	case DeniedChannel:
		a.Stats.Channel++
	case DeniedTLSCert:
		a.Stats.TLSCert++
	}
	l := &a.Log
	if maxLen <= 0 {
		l.Trim(0)
		return
	}
	for i := 0; i < len(l.Entries) && i < 10; i++ {
		e := l.Entries[i]
		d := e.Ctime - nowMs
		if d < 0 {
			d = -d
		}
		if e.Reason == r && e.Context == ctx && d <= logGroupMs && e.Object == object && e.Username == username {
			copy(l.Entries[1:i+1], l.Entries[:i])
			l.Entries[0] = e
			e.ClientInfo, e.Ctime = clientInfo, nowMs
			e.Count++
			return
		}
	}
	e := &LogEntry{Count: 1, Reason: r, Context: ctx, Object: object, Username: username,
		Ctime: nowMs, ClientInfo: clientInfo, EntryID: l.next, Created: nowMs}
	l.next++
	l.Entries = append(l.Entries, nil)
	copy(l.Entries[1:], l.Entries)
	l.Entries[0] = e
	l.Trim(maxLen)
}

// Trim drops the oldest entries beyond n (acllog-max-len).
func (l *Log) Trim(n int) {
	if len(l.Entries) > n {
		clear(l.Entries[n:])
		l.Entries = l.Entries[:n]
	}
}

// Reset is ACL LOG RESET.
func (l *Log) Reset() { l.Entries = nil }
