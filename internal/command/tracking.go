package command

import (
	"strconv"

	"github.com/hotkv/hotkv/internal/resp"
)

// Client-side caching (redis.io/docs/latest/develop/reference/client-side-caching):
// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO. The option checks are
// Redis's clientCommand ones, in its order; the registry (which client read
// which key, the BCAST prefixes, the invalidation messages) is the server's
// (Tracking, internal/server/tracking.go).

// TrackingState is a client's tracking mode (Redis's CLIENT_TRACKING_* flags).
// The server reads it when it delivers invalidations; every access happens
// under the engine's serialisation point.
type TrackingState struct {
	On          bool // CLIENT_TRACKING
	BCast       bool
	OptIn       bool
	OptOut      bool
	NoLoop      bool
	Caching     bool // CLIENT CACHING yes|no was given for the next command
	BrokenRedir bool // the redirection client went away
	Redirect    int64
	Prefixes    []string // BCAST prefixes, sorted (Redis keeps them in a radix tree)
}

// Tracking is the server's side of client-side caching, as CLIENT uses it.
// Calls happen under the engine's serialisation point.
type Tracking interface {
	// ClientExists reports whether a connection with this ID exists (REDIRECT).
	ClientExists(id int64) bool
	// Enable turns tracking on for c (Redis's enableTracking), after
	// CLIENT TRACKING ON passed its checks: redirect is 0 for none; prefixes
	// (BCAST only) are copied.
	Enable(c *Client, redirect int64, bcast, optIn, optOut, noLoop bool, prefixes [][]byte)
	// Disable turns tracking off for c (CLIENT TRACKING OFF, RESET, disconnect).
	Disable(c *Client)
}

func clientTracking(c *Ctx) {
	var (
		redirect                     int64
		bcast, optIn, optOut, noLoop bool
		prefixes                     [][]byte
	)
	// the options first, as Redis parses them: a missing REDIRECT target is
	// reported before a later syntax error, and even for OFF
	for j := 3; j < len(c.Argv); j++ {
		a := c.Argv[j]
		more := len(c.Argv) - 1 - j
		switch {
		case eqFold(a, "redirect") && more > 0:
			j++
			if redirect != 0 {
				c.Error("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := resp.ParseInt(c.Argv[j])
			if !ok {
				c.Err(ErrNotInt)
				return
			}
			redirect = id
			if !c.Srv.Tracking().ClientExists(id) {
				c.Error("ERR The client ID you want redirect to does not exist")
				return
			}
		case eqFold(a, "bcast"):
			bcast = true
		case eqFold(a, "optin"):
			optIn = true
		case eqFold(a, "optout"):
			optOut = true
		case eqFold(a, "noloop"):
			noLoop = true
		case eqFold(a, "prefix") && more > 0:
			j++
			prefixes = append(prefixes, c.Argv[j])
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	t := &c.Client.Tracking
	switch {
	case eqFold(c.Argv[2], "on"):
	case eqFold(c.Argv[2], "off"):
		c.Srv.Tracking().Disable(c.Client)
		c.W.SimpleString("OK")
		return
	default:
		c.Err(ErrSyntax)
		return
	}
	switch {
	case !bcast && len(prefixes) > 0:
		c.Error("ERR PREFIX option requires BCAST mode to be enabled")
	case t.On && t.BCast != bcast:
		c.Error("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
	case bcast && (optIn || optOut):
		c.Error("ERR OPTIN and OPTOUT are not compatible with BCAST")
	case optIn && optOut:
		c.Error("ERR You can't specify both OPTIN mode and OPTOUT mode")
	case (optIn && t.OptOut) || (optOut && t.OptIn):
		c.Error("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
	case bcast && prefixCollision(c, t.Prefixes, prefixes):
	default:
		c.Srv.Tracking().Enable(c.Client, redirect, bcast, optIn, optOut, noLoop, prefixes)
		c.W.SimpleString("OK")
	}
}

// prefixCollision is Redis's checkPrefixCollisionsOrReply: two prefixes
// collide when one starts the other (both would announce the same keys). It
// checks each new prefix against the client's prefixes, then against the new
// ones after it, and appends the error for the first collision.
//
// Deviation: when the colliding new prefixes are not the first ones given
// (CLIENT TRACKING ON BCAST PREFIX a PREFIX b PREFIX bc), Redis replies the
// error and then enables tracking and replies +OK as well: two replies to one
// command. HotKV replies the error only and changes nothing.
func prefixCollision(c *Ctx, have []string, prefixes [][]byte) bool {
	overlap := func(a, b string) bool {
		n := min(len(a), len(b))
		return a[:n] == b[:n]
	}
	for i, p := range prefixes {
		for _, h := range have {
			if overlap(h, string(p)) {
				c.Error("ERR Prefix '" + cString(p) + "' overlaps with an existing prefix '" + cString([]byte(h)) +
					"'. Prefixes for a single client must not overlap.")
				return true
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(string(p), string(q)) {
				c.Error("ERR Prefix '" + cString(p) + "' overlaps with another provided prefix '" + cString(q) +
					"'. Prefixes for a single client must not overlap.")
				return true
			}
		}
	}
	return false
}

// cString is b as Redis's %s prints it: up to the first NUL byte, and with
// newlines turned into spaces as addReplyErrorFormat does.
func cString(b []byte) string {
	out := make([]byte, 0, len(b))
	for _, ch := range b {
		if ch == 0 {
			break
		}
		if ch == '\r' || ch == '\n' {
			ch = ' '
		}
		out = append(out, ch)
	}
	return string(out)
}

// clientCaching: CLIENT CACHING YES|NO, for the next command only.
func clientCaching(c *Ctx) {
	t := &c.Client.Tracking
	if !t.On {
		c.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch {
	case eqFold(c.Argv[2], "yes"):
		if !t.OptIn {
			c.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case eqFold(c.Argv[2], "no"):
		if !t.OptOut {
			c.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		c.Err(ErrSyntax)
		return
	}
	t.Caching = true
	c.W.SimpleString("OK")
}

// clientGetredir: the redirection target, 0 for none, -1 when not tracking.
func clientGetredir(c *Ctx) {
	t := &c.Client.Tracking
	if !t.On {
		c.W.Int(-1)
		return
	}
	c.W.Int(t.Redirect)
}

// clientTrackingInfo: Redis's addReplyTrackingInfo, a map of flags (a set),
// redirect and prefixes.
func clientTrackingInfo(c *Ctx) {
	t := &c.Client.Tracking
	c.W.MapLen(3)
	c.W.BulkString("flags")
	flags := TrackingFlags(t)
	c.W.SetLen(len(flags))
	for _, f := range flags {
		c.W.BulkString(f)
	}
	c.W.BulkString("redirect")
	if t.On {
		c.W.Int(t.Redirect)
	} else {
		c.W.Int(-1)
	}
	c.W.BulkString("prefixes")
	c.W.ArrayLen(len(t.Prefixes))
	for _, p := range t.Prefixes {
		c.W.BulkString(p)
	}
}

// TrackingFlags lists CLIENT TRACKINGINFO's flags in Redis's order.
func TrackingFlags(t *TrackingState) []string {
	flags := make([]string, 0, 4)
	if t.On {
		flags = append(flags, "on")
	} else {
		flags = append(flags, "off")
	}
	if t.BCast {
		flags = append(flags, "bcast")
	}
	if t.OptIn {
		flags = append(flags, "optin")
		if t.Caching {
			flags = append(flags, "caching-yes")
		}
	}
	if t.OptOut {
		flags = append(flags, "optout")
		if t.Caching {
			flags = append(flags, "caching-no")
		}
	}
	if t.NoLoop {
		flags = append(flags, "noloop")
	}
	if t.BrokenRedir {
		flags = append(flags, "broken_redirect")
	}
	return flags
}

// TrackingFlagChars appends CLIENT LIST's tracking flags: t, R, B.
func TrackingFlagChars(b []byte, t *TrackingState) []byte {
	if t.On {
		b = append(b, 't')
	}
	if t.BrokenRedir {
		b = append(b, 'R')
	}
	if t.BCast {
		b = append(b, 'B')
	}
	return b
}

// TrackingRedirField is CLIENT LIST's redir= value.
func TrackingRedirField(t *TrackingState) string {
	if !t.On {
		return "-1"
	}
	return strconv.FormatInt(t.Redirect, 10)
}
