package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/hotkv/hotkv/internal/acl"
)

// LoadError is an error in configuration text, reported as redis-server
// reports it before exiting. Error() is Redis's message without its leading
// and trailing newline:
//
//	*** FATAL CONFIG FILE ERROR (Redis 8.6.3) ***
//	Reading the configuration file, at line 3
//	>>> 'foo bar'
//	Bad directive or wrong number of arguments
//
// so printing "\n" + err.Error() + "\n" to standard error reproduces Redis's
// output byte for byte.
type LoadError struct {
	Line   int    // 1-based line in the text being read; 0 when the error is not about a line
	Text   string // that line, trimmed as Redis trims it
	Reason string // Redis's message, e.g. "Bad directive or wrong number of arguments"
}

func (e *LoadError) Error() string {
	s := "*** FATAL CONFIG FILE ERROR (Redis " + RedisVersion + ") ***\n"
	if e.Line > 0 {
		s += "Reading the configuration file, at line " + strconv.Itoa(e.Line) + "\n>>> '" + e.Text + "'\n"
	}
	return s + e.Reason
}

// maxIncludeDepth bounds nested include directives; Redis has no bound and
// overflows its stack on an include loop.
const maxIncludeDepth = 32

// deprecated are directives Redis still accepts in a file and ignores, with
// the argument count (name included) each must have.
var deprecated = map[string]int{
	"list-max-ziplist-entries": 2,
	"list-max-ziplist-value":   2,
	"lua-replicate-commands":   2,
}

// loadSession is one load: the values it builds, committed only when all the
// text was read without error, so a failed load changes nothing.
type loadSession struct {
	vals       []*value
	saveLoaded bool // a save line was read (the first replaces the defaults)
	depth      int  // include nesting
	sandbox    bool // tests: include reads nothing, logfile is not opened
	users      [][]string
	renames    [][2]string
}

func (c *Config) newSession() *loadSession {
	s := &loadSession{vals: make([]*value, len(c.vals))}
	for i := range c.vals {
		s.vals[i] = c.vals[i].Load()
	}
	return s
}

func (s *loadSession) commit(c *Config) {
	for i, v := range s.vals {
		c.vals[i].Store(v)
	}
	c.users = append(c.users, s.users...)
	c.renames = append(c.renames, s.renames...)
}

// LoadFile reads a redis.conf-style file, as redis-server does with the file
// named on its command line, and on success records its absolute path as
// File() for CONFIG REWRITE. The syntax is Redis's: one directive per line,
// blank lines and lines starting with '#' ignored (there are no trailing
// comments), arguments split and unquoted by sdssplitargs rules (see
// splitArgs), directive names in any case, yes/no for booleans, memory units
// 1k 1kb 1m 1mb 1g 1gb in any case, multi-word parameters either as several
// arguments or as one quoted argument (save "900 1 300 10"). A parameter given
// twice takes its last value, except save: the file's save lines add up (the
// first replaces the defaults) and save "" clears them. "include path"
// reads another file in place; a path with *, ? or [ includes every match, in
// name order, and nothing when none matches.
//
// Beyond parameters, Redis's include is supported, and the deprecated
// list-max-ziplist-entries, list-max-ziplist-value and lua-replicate-commands
// are ignored as Redis ignores them. "user" lines are checked as Redis
// checks them and kept (Users): the server creates the users at start-up;
// "rename-command" lines are kept (Renames) for the server to apply to its
// command table. loadmodule and module parameters (names with a dot) are
// errors: HotKV has no modules.
//
// A file that cannot be read is "Fatal error, can't open config file 'path':
// No such file or directory"; an error in the text is a *LoadError. Either
// way nothing changes. LoadFile applies immutable parameters and runs no
// OnChange hooks: it is meant for startup. As in Redis, a non-empty logfile is
// opened for appending (created if missing) to check that it can be.
func (c *Config) LoadFile(path string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	s := c.newSession()
	text, err := s.readFiles(abs)
	if err != nil {
		return err
	}
	if err := s.loadString(text); err != nil {
		return err
	}
	s.commit(c)
	c.file.Store(&abs)
	return nil
}

// loadString is loadServerConfigFromString: text is split on newlines and
// read line by line; Line numbers in errors count from 1 in text.
func (s *loadSession) loadString(text string) error {
	for i, raw := range strings.Split(text, "\n") {
		line := strings.Trim(cstr(raw), " \t\r\n")
		if line == "" || line[0] == '#' {
			continue
		}
		fail := func(reason string) error { return &LoadError{Line: i + 1, Text: line, Reason: reason} }
		argv, ok := splitArgs(line)
		if !ok {
			return fail("Unbalanced quotes in configuration line")
		}
		if len(argv) == 0 {
			continue
		}
		name := asciiLower(argv[0])
		if e, ok := reg.lookup(name); ok {
			if errText := s.setParam(e.idx, argv); errText != "" {
				return fail(errText)
			}
			continue
		}
		if n, ok := deprecated[name]; ok && len(argv) == n {
			continue
		}
		switch {
		case name == "include" && len(argv) == 2:
			if s.depth >= maxIncludeDepth {
				return fail("Too many nested include directives")
			}
			if err := s.include(argv[1]); err != nil {
				return err
			}
		case name == "user" && len(argv) >= 2:
			if errText := s.addUser(argv); errText != "" {
				return fail(errText)
			}
		case name == "rename-command" && len(argv) == 3:
			s.renames = append(s.renames, [2]string{argv[1], argv[2]})
		case name == "loadmodule" && len(argv) >= 2:
			return fail("HotKV does not support the '" + name + "' directive")
		case strings.Contains(name, "."):
			if len(argv) < 2 {
				return fail("Module config specified without value")
			}
			return fail("HotKV does not support module configuration")
		case name == "sentinel":
			if len(argv) != 1 {
				return fail("sentinel directive while not in sentinel mode")
			}
		default:
			return fail("Bad directive or wrong number of arguments")
		}
	}
	return s.checkLogfile()
}

// addUser checks a "user" line as Redis's ACLAppendUserForLoading and keeps
// it; the error names the argument Redis names (its index into the rules
// taken as one into the line, as Redis does).
func (s *loadSession) addUser(argv []string) string {
	for _, u := range s.users {
		if u[0] == argv[1] {
			return "Error in user declaration '" + argv[1] + "': " + acl.ErrDuplicateUser.Error()
		}
	}
	rules, bad, err := acl.ValidateUserLine(argv)
	if err != nil {
		return "Error in user declaration '" + argv[min(bad, len(argv)-1)] + "': " + err.Error()
	}
	s.users = append(s.users, append([]string{argv[1]}, rules...))
	return ""
}

// setParam applies one parameter line (argv[0] is the name) to the session.
func (s *loadSession) setParam(idx int, argv []string) string {
	d := &reg.defs[idx]
	args := argv[1:]
	if d.flags&fMulti == 0 {
		if len(argv) != 2 {
			return "wrong number of arguments"
		}
	} else if len(argv) == 2 && argv[1] != "" {
		// One argument holding several words: --save "900 1 300 10".
		// Unbalanced quotes inside it leave no words, as in Redis.
		args, _ = splitArgs(argv[1])
	}
	nv, _, errText := d.parse(s.vals[idx], args, &setCtx{loading: true, saveLoaded: &s.saveLoaded})
	if errText != "" {
		return errText
	}
	s.vals[idx] = nv
	return ""
}

// include reads the file (or files) an include directive names.
func (s *loadSession) include(path string) error {
	s.depth++
	defer func() { s.depth-- }()
	text, err := s.readFiles(path)
	if err != nil {
		return err
	}
	return s.loadString(text)
}

// readFiles is loadServerConfig's reading: one file, or every match of a
// pattern concatenated (none is fine). Paths are relative to the dir read so
// far, which is where Redis, having chdir()ed, would look.
func (s *loadSession) readFiles(path string) (string, error) {
	if s.sandbox {
		return "", nil
	}
	if !strings.ContainsAny(path, "*?[") {
		return s.readFile(path)
	}
	matches, err := filepath.Glob(s.resolve(path))
	if err != nil {
		return "", nil // a bad pattern matches nothing
	}
	var b strings.Builder
	for _, m := range matches {
		text, err := s.readFile(m)
		if err != nil {
			return "", err
		}
		b.WriteString(text)
	}
	return b.String(), nil
}

func (s *loadSession) readFile(path string) (string, error) {
	data, err := os.ReadFile(s.resolve(path))
	if err != nil {
		if errors.Is(err, syscall.EISDIR) {
			return "", nil // fopen succeeds on a directory and fgets reads nothing
		}
		return "", errors.New("Fatal error, can't open config file '" + path + "': " + strerror(err))
	}
	return string(data), nil
}

// resolve makes a relative path relative to the session's dir.
func (s *loadSession) resolve(path string) string {
	dir := s.vals[reg.index["dir"].idx].s
	if filepath.IsAbs(path) || dir == "" {
		return path
	}
	if wd, err := os.Getwd(); err == nil && wd == dir {
		return path
	}
	return filepath.Join(dir, path)
}

// checkLogfile is the check at the end of loadServerConfigFromString.
func (s *loadSession) checkLogfile() error {
	lf := s.vals[reg.index["logfile"].idx].s
	if lf == "" || s.sandbox {
		return nil
	}
	f, err := os.OpenFile(s.resolve(lf), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		return &LoadError{Reason: "Can't open the log file: " + strerror(err)}
	}
	return f.Close()
}
