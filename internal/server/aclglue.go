package server

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/hotkv/hotkv/internal/acl"
	"github.com/hotkv/hotkv/internal/command"
)

// The ACL's place in the server (decision 0046): the users live in
// internal/acl; admission checks every client's command against its user
// (admit.go), EXEC each queued command again, a script each redis.call; the
// hooks here close the connections of deleted users and the subscribers
// whose channels were revoked.

// initACL builds the users over the command table and follows
// requirepass and acl-pubsub-default.
func (s *Server) initACL() {
	a := acl.New(s.table.ACLCommands())
	s.acl = a
	a.PubsubAll = s.cfg.String("acl-pubsub-default") == "allchannels"
	s.cfg.OnChange("acl-pubsub-default", func(v string) error {
		a.PubsubAll = v == "allchannels"
		return nil
	})
	a.SetDefaultPassword(s.cfg.String("requirepass"))
	s.cfg.OnChange("requirepass", func(v string) error {
		a.SetDefaultPassword(v)
		return nil
	})
	a.Warn = func(msg string) { s.log.Warn(msg) }
	a.Hooks = acl.Hooks{Deleted: s.aclUserDeleted, ChannelsRevoked: s.aclChannelsRevoked}
	// CONFIG REWRITE runs as a command: under the engine lock, as the users
	s.cfg.SetUserLines(func() []string {
		var lines []string
		for _, u := range a.Users() {
			lines = append(lines, "user "+u.Name+" "+u.Describe())
		}
		return lines
	})
}

// loadACLAtStartup creates the config file's users, or loads the aclfile
// (ACLLoadUsersAtStartup); an error stops the start.
func (s *Server) loadACLAtStartup() error {
	lines := s.cfg.Users()
	file := s.ACLFile()
	if file != "" && len(lines) > 0 {
		return errors.New("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. " +
			"This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or " +
			"declare users directly in your redis.conf, but not both.")
	}
	err := s.acl.LoadConfigured(lines, func(name string) {
		s.log.Info("The user '" + name + "' is disabled (there is no 'on' modifier in the user description). Make sure this is not a configuration error.")
	})
	if err != nil {
		s.log.Warn(err.Error())
		return errors.New("Critical error while loading ACLs. Exiting.")
	}
	if file != "" {
		if err := s.acl.LoadFile(file); err != nil {
			return fmt.Errorf("Aborting Redis startup because of ACL errors: %s", err)
		}
	}
	return nil
}

// ACL implements command.Server.
func (s *Server) ACL() *acl.ACL { return s.acl }

// ACLFile implements command.Server: aclfile, a relative path taken in dir
// (where Redis, having changed to dir, opens it).
func (s *Server) ACLFile() string {
	f := s.cfg.String("aclfile")
	if f == "" || filepath.IsAbs(f) {
		return f
	}
	return filepath.Join(s.cfg.String("dir"), f)
}

// ACLDenied implements command.Server.
func (s *Server) ACLDenied(c *command.Client, r acl.Reason, ctx acl.Context, object, username string) {
	info, maxLen := "", int(s.cfg.Int("acllog-max-len"))
	if maxLen > 0 {
		// the client the network served: a script's caller, not its fake client
		cl := s.cur
		if cl == nil {
			cl = s.clientOf(c)
		}
		if cl != nil {
			info = string(s.appendClientLine(nil, cl))
		}
	}
	s.acl.Add(r, ctx, object, username, info, s.clock.NowMs(), maxLen)
}

// RandomHex implements command.Server.
func (s *Server) RandomHex(n int) string { return randomHex((n + 1) / 2)[:n] }

// aclCheck checks cl's command against its user: "" or the NOPERM error,
// logged with ctx (processCommand's ACLCheckAllPerm).
func (s *Server) aclCheck(cl *client, spec *command.Spec, argv [][]byte, ctx acl.Context) string {
	if r, msg := s.aclDeny(cl, spec, argv, ctx); r != acl.OK {
		return "NOPERM " + msg
	}
	return ""
}

// aclDeny checks a command of cl against cl's user (a nil user runs
// anything); a denial is logged with ctx, and its reason and message
// (getAclErrorMessage's) returned. Each caller words its own error: the
// client's NOPERM, a script's "ACL failure in script", EXEC's.
func (s *Server) aclDeny(cl *client, spec *command.Spec, argv [][]byte, ctx acl.Context) (acl.Reason, string) {
	u := cl.User
	if u == nil || u.AllPerms() {
		return acl.OK, ""
	}
	cmd := s.acl.Commands().ByID(spec.ID)
	r, pos := u.Check(cmd, argv, &s.aclSc)
	if r == acl.OK {
		return acl.OK, ""
	}
	s.ACLDenied(&cl.Client, r, ctx, aclObject(r, cmd, argv, pos), u.Name)
	return r, acl.ErrorMessage(r, u, cmd, argv[pos], false)
}

// aclObject is a log entry's object: the command, or the key or channel.
func aclObject(r acl.Reason, cmd *acl.Command, argv [][]byte, pos int) string {
	if r == acl.DeniedCmd {
		return cmd.Name
	}
	return string(argv[pos])
}

// aclExecReason is EXEC's text for a queued command the ACL no longer allows.
func aclExecReason(r acl.Reason) string {
	switch r {
	case acl.DeniedCmd:
		return "no permission to execute the command or subcommand"
	case acl.DeniedKey:
		return "no permission to touch the specified keys"
	case acl.DeniedChannel:
		return "no permission to access one of the channels used as arguments"
	}
	return "no permission"
}

// aclUserDeleted closes the connections of a deleted user.
func (s *Server) aclUserDeleted(u *acl.User) {
	for _, cl := range s.sortedClients() {
		if cl.User == u {
			s.deauthClose(cl)
		}
	}
}

// aclChannelsRevoked closes u's subscribers holding a subscription allowed
// rejects (ACLShouldKillPubsubClient).
func (s *Server) aclChannelsRevoked(u *acl.User, allowed func(name []byte, pattern bool) bool) {
	for _, cl := range s.sortedClients() {
		if cl.User != u {
			continue
		}
		for kind, names := range cl.push.subs {
			bad := false
			for n := range names {
				if !allowed([]byte(n), kind == 1) {
					bad = true
					break
				}
			}
			if bad {
				s.deauthClose(cl)
				break
			}
		}
	}
}

// deauthClose is deauthenticateAndCloseClient: the client goes back to the
// default user, unauthenticated, and is closed (after its reply, when it is
// the one running the command).
func (s *Server) deauthClose(cl *client) {
	cl.User = s.acl.Default
	cl.Authenticated = false
	if cl == s.cur {
		cl.CloseAfterReply = true
		return
	}
	s.mu.Lock()
	if _, live := s.clients[cl.ID]; live {
		delete(s.clients, cl.ID)
		cl.kill()
	}
	s.mu.Unlock()
}

// userName is CLIENT LIST's user field.
func userName(u *acl.User) string {
	if u == nil {
		return "(superuser)"
	}
	return u.Name
}
