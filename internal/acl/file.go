package acl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LoadFile is ACL LOAD and the aclfile at startup (ACLLoadFromFile): every
// line of the file at path is "user <name> rules..." or blank; with any
// error nothing changes and the errors, one sentence each, are returned.
// On success the file's users replace the current ones: a user of the same
// name keeps its identity and takes the new rules (its subscribers whose
// channels are revoked are closed), users not in the file are deleted
// (their connections closed), and a file without a default user gets
// Redis's default.
func (a *ACL) LoadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("Error loading ACLs, opening file '%s': %s", path, errText(err))
	}
	return a.load(path, string(data))
}

func (a *ACL) load(path, text string) error {
	var errs strings.Builder
	next := map[string]*User{}
	var order []string
	for i, line := range strings.Split(text, "\n") {
		n := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := strings.Split(line, " ")
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", path, n)
			continue
		}
		if hasSpaces(argv[1]) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", path, n, argv[1])
			continue
		}
		if next[argv[1]] != nil {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], n)
			continue
		}
		u := newUser(a.cmds, argv[1], a.PubsubAll)
		next[argv[1]] = u
		order = append(order, argv[1])
		merged, bad := mergeSelectorArgs(argv[2:])
		if bad >= 0 {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", path, n)
		}
		syntax := false
		for _, op := range merged {
			op = strings.Trim(op, "\t\r\n")
			if err := u.apply(a, op); err != nil {
				if err == errUnknown {
					fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", path, n, op, err)
				} else if !syntax {
					fmt.Fprintf(&errs, "%s:%d: %s. ", path, n, err)
					syntax = true
				}
			}
		}
	}
	if errs.Len() > 0 {
		errs.WriteString("WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
		return errors.New(errs.String())
	}
	if next["default"] == nil {
		next["default"] = a.newDefaultUser()
	}
	for name, old := range a.users {
		nu := next[name]
		if nu == nil {
			delete(a.users, name)
			if a.Hooks.Deleted != nil {
				a.Hooks.Deleted(old)
			}
			continue
		}
		a.revokeChannels(old, nu)
		old.copyFrom(nu)
		next[name] = old
	}
	for name, u := range next {
		a.users[name] = u
	}
	a.syncDefault()
	return nil
}

// errText is strerror's text for the common file errors.
func errText(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, os.ErrPermission):
		return "Permission denied"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// FileText is the ACL file's text: a "user" line per user, by name.
func (a *ACL) FileText() string {
	var b strings.Builder
	for _, u := range a.Users() {
		b.WriteString("user ")
		b.WriteString(u.Name)
		b.WriteByte(' ')
		b.WriteString(u.Describe())
		b.WriteByte('\n')
	}
	return b.String()
}

// SaveFile is ACL SAVE (ACLSaveToFile): the users are written to a
// temporary file beside path, fsynced, renamed over path, and the directory
// fsynced. tag makes the temporary name unique.
func (a *ACL) SaveFile(path, tag string) error {
	tmp := path + ".tmp-" + tag
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("Opening temp ACL file for ACL SAVE: %s", errText(err))
	}
	fail := func(what string, err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("%s ACL file for ACL SAVE: %s", what, errText(err))
	}
	if _, err := f.WriteString(a.FileText()); err != nil {
		return fail("Writing", err)
	}
	if err := f.Sync(); err != nil {
		return fail("Syncing", err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("Writing ACL file for ACL SAVE: %s", errText(err))
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("Renaming ACL file for ACL SAVE: %s", errText(err))
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		err = d.Sync()
		_ = d.Close()
		if err != nil {
			return fmt.Errorf("Syncing ACL directory for ACL SAVE: %s", errText(err))
		}
	}
	return nil
}
