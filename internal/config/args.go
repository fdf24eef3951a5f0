package config

import (
	"errors"
	"path/filepath"
	"strings"
)

// ParseArgs configures from a command line as redis-server's main does. args
// are the arguments after the program name (os.Args[1:]); the caller handles
// -v/--version, -h/--help and the like first.
//
// An optional first argument not starting with '-' names a configuration
// file. Every following "--name" starts a directive and the arguments up to
// the next "--name" are its values, so "--save 900 1 --port 7000" means the
// lines "save 900 1" and "port 7000". As in Redis, the directives are appended
// to the file's text (after a newline) and the whole is read as one text:
// a later --port overrides the file's port, and an error in an option is
// reported with a line number past the file's last line, showing the option
// as a line (values quoted: >>> 'port "x"'). A value may itself start with
// "--" when it directly follows its name ("--requirepass --secret"); "--save"
// followed by another option or by nothing means save "".
//
// configFile is the file's absolute path ("" when none), which File() then
// returns and CONFIG REWRITE writes. Errors are those of LoadFile, and nothing
// changes on error. Reading configuration from standard input ("-") is not
// supported.
func (c *Config) ParseArgs(args []string) (configFile string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	j := 0
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		configFile = args[0]
		if abs, err := filepath.Abs(configFile); err == nil {
			configFile = abs
		}
		j = 1
	}
	options, err := optionsText(args, j)
	if err != nil {
		return "", err
	}
	s := c.newSession()
	text := ""
	if configFile != "" {
		if text, err = s.readFiles(configFile); err != nil {
			return "", err
		}
	}
	if err := s.loadString(text + "\n" + options); err != nil {
		return "", err
	}
	s.commit(c)
	if configFile != "" {
		c.file.Store(&configFile)
	}
	return configFile, nil
}

// optionsText turns args[j:] into configuration lines, as redis-server's main
// builds its "options" string.
func optionsText(args []string, j int) (string, error) {
	var b strings.Builder
	handledLast := true // the last directive has at least one value
	last := len(args) - 1
	for ; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "-" && (j == 0 || j == last):
			return "", errors.New("reading the configuration from standard input is not supported")
		case handledLast && strings.HasPrefix(a, "--"):
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(a[2:])
			b.WriteByte(' ')
			words, _ := splitArgs(a)
			if len(words) != 1 {
				// "--port 6380" as one argument carries its own value.
				handledLast = true
				continue
			}
			handledLast = false
			nextIsOption := j != last && strings.HasPrefix(args[j+1], "--")
			switch {
			case equalFoldASCII(a, "--save") && nextIsOption:
				b.WriteString(`""`) // --save --port 1: save "" (pre-7.0 behaviour)
				handledLast = true
			case equalFoldASCII(a, "--save") && j == last:
				b.WriteString(`""`)
			case equalFoldASCII(a, "--sentinel") && nextIsOption:
				handledLast = true
			}
		default:
			b.WriteString(repr(a))
			b.WriteByte(' ')
			handledLast = true
		}
	}
	return b.String(), nil
}
