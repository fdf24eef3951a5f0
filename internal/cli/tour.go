package cli

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// A tourStep is one command of a tour, with what it shows.
type tourStep struct {
	title   string
	explain string
	args    []string
}

// lockTour is the README's lock walkthrough, run for real.
var lockTour = struct {
	key   string
	intro []string
	steps []tourStep
	outro []string
}{
	key: "lock:billing-run",
	intro: []string{
		"Two workers, A and B, both want to run the nightly billing job; only one may.",
		"A lock is one key: whoever sets it owns the job until it deletes it or it expires.",
	},
	steps: []tourStep{
		{"Worker A takes the lock.",
			"NX sets the key only if nobody holds it; PX 30000 lets the lock expire by itself if A dies.",
			[]string{"SET", "lock:billing-run", "tok-a81f", "NX", "PX", "30000"}},
		{"Worker B is turned away.",
			"The key exists, so NX refuses: B gets (nil) and must not run the job.",
			[]string{"SET", "lock:billing-run", "tok-b22c", "NX", "PX", "30000"}},
		{"A checks how long the lock still lives.",
			"PTTL is the time left in milliseconds; a long job extends it (SET ... IFEQ tok-a81f PX 30000).",
			[]string{"PTTL", "lock:billing-run"}},
		{"A wrong token does nothing.",
			"DELEX ... IFEQ deletes only if the value is that token: a stale or foreign token removes nothing.",
			[]string{"DELEX", "lock:billing-run", "IFEQ", "tok-stale"}},
		{"A releases its own lock.",
			"With its own token A's release deletes the key: the lock is free for the next worker.",
			[]string{"DELEX", "lock:billing-run", "IFEQ", "tok-a81f"}},
	},
	outro: []string{
		"That is the whole recipe: take with SET key token NX PX ttl, release with",
		"DELEX key IFEQ token, extend with SET key token IFEQ token PX ttl.",
	},
}

// tourMain is "hotkv-cli tour locks [--auto]".
func (s *session) tourMain(args []string) int {
	auto := false
	var names []string
	for _, a := range args {
		switch a {
		case "--auto", "-auto":
			auto = true
		default:
			names = append(names, a)
		}
	}
	if len(names) != 1 || names[0] != "locks" {
		s.errf("Usage: hotkv-cli [options] tour locks [--auto]\n" +
			"Tours: locks (distributed locks, step by step, against the server).\n")
		return 1
	}
	if s.connect(false, false) != nil {
		return 1
	}
	return exitCode(s.runTour(auto))
}

// runTour plays the lock tour: each step's explanation, the command at the
// prompt and the server's actual reply. Without auto it waits for Enter
// before running each command ("q" leaves; the end of input plays the rest).
func (s *session) runTour(auto bool) error {
	t := lockTour
	c := s.getConn()
	if r, err := c.Do("EXISTS", t.key); err == nil && r.Kind == KindInteger && r.Int == 1 {
		ttl, _ := c.Do("PTTL", t.key)
		left := ""
		if ttl != nil && ttl.Kind == KindInteger && ttl.Int > 0 {
			left = fmt.Sprintf(" (it expires in %d ms)", ttl.Int)
		}
		s.errf("%s already exists on this server%s: the tour needs it free.\n"+
			"Wait for it to expire or remove it with: DEL %s\n", t.key, left, t.key)
		return &errExit{1}
	}
	in := bufio.NewReader(s.env.Stdin)
	w := s.out
	fmt.Fprintf(w, "Tour: distributed locks, %d steps, run for real against %s.\n", len(t.steps), s.where())
	for _, l := range t.intro {
		fmt.Fprintln(w, l)
	}
	if !auto {
		fmt.Fprintln(w, "Press Enter to run each command (q and Enter to leave).")
	}
	for i, st := range t.steps {
		fmt.Fprintf(w, "\nStep %d/%d: %s\n", i+1, len(t.steps), st.title)
		fmt.Fprintf(w, "  %s\n", st.explain)
		fmt.Fprintf(w, "%s%s", s.Prompt(), strings.Join(st.args, " "))
		w.Flush()
		if !auto {
			line, err := in.ReadString('\n')
			if strings.TrimSpace(line) == "q" {
				fmt.Fprintln(w)
				w.Flush()
				return nil
			}
			if err == io.EOF && line == "" {
				auto = true // nothing more to read: play the rest through
			}
			if err != nil || !s.env.StdinTTY {
				fmt.Fprintln(w) // no terminal echoed the newline
			}
		} else {
			fmt.Fprintln(w)
		}
		w.Flush()
		if _, err := s.readReplyFor(st.args); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	for _, l := range t.outro {
		fmt.Fprintln(w, l)
	}
	w.Flush()
	return nil
}

// readReplyFor sends one command and prints its reply.
func (s *session) readReplyFor(args []string) (*Reply, error) {
	c := s.getConn()
	c.Append(args)
	if err := c.Flush(); err != nil {
		s.errf("Error: %v\n", err)
		return nil, &errExit{1}
	}
	return s.readReply(false, false)
}

// where names the server for messages: host:port or the socket path.
func (s *session) where() string {
	if s.cfg.Socket != "" {
		return s.cfg.Socket
	}
	return s.addr()
}
