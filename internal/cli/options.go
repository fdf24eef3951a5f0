package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Version is hotkv-cli's own version.
const Version = "0.1.0"

// Defaults, as redis-cli's.
const (
	DefaultHost        = "127.0.0.1"
	DefaultPort        = 6379
	defaultPipeTimeout = 30 * time.Second
)

// Config is the parsed command line.
type Config struct {
	Host, Socket   string
	Port           int
	User, Auth     string
	DB             int
	Resp3, Resp2   bool
	Repeat         int64
	Interval       time.Duration
	StdinLastArg   bool
	Output         int
	OutputExplicit bool
	MBDelim        string // -d: between the elements of a reply (raw mode)
	CmdDelim       string // -D: between replies (raw mode)
	SetErrCode     bool   // -e
	NoAuthWarning  bool
	PushOutput     bool
	PushExplicit   bool

	Latency, LatencyHistory bool
	Stat                    bool // --stat: rolling statistics (redis-cli's statMode)
	Locks                   bool // --locks: the lock view (HOTKV.LOCKS), HotKV's own
	Scan                    bool
	Pattern                 string
	Count                   int
	CountSet                bool
	Pipe                    bool
	PipeTimeout             time.Duration

	// Args are the command words (one-shot mode) or, for "tour", the tour
	// and its options.
	Args []string
}

// usageError is a bad command line: the message goes to stderr, exit code 1.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// exitRequest ends Main early with a code (for --help and --version).
type exitRequest struct{ code int }

func (e *exitRequest) Error() string { return "exit " + strconv.Itoa(e.code) }

// parseOptions reads redis-cli's options up to the first word that is not an
// option (the command). stdoutTTY picks the default output mode: raw when
// stdout is not a terminal, as redis-cli does.
func parseOptions(args []string, stdoutTTY bool, stdout, stderr io.Writer, getenv func(string) string) (*Config, error) {
	c := &Config{Host: DefaultHost, Port: DefaultPort, Repeat: 1, MBDelim: "\n", CmdDelim: "\n",
		Count: 10, PipeTimeout: defaultPipeTimeout}
	if stdoutTTY || getenv("FAKETTY") != "" {
		c.Output, c.PushOutput = OutputStandard, true
	} else {
		c.Output, c.PushOutput = OutputRaw, false
	}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		last := i == len(args)-1
		next := func() string { i++; return args[i] }
		switch {
		case a == "-h" && !last:
			c.Host = next()
		case a == "-h" && last, a == "--help":
			usage(stdout)
			return nil, &exitRequest{0}
		case a == "-x":
			c.StdinLastArg = true
		case a == "-p" && !last:
			c.Port = atoi(next())
			if c.Port < 0 || c.Port > 65535 {
				return nil, &usageError{"Invalid server port."}
			}
		case a == "-s" && !last:
			c.Socket = next()
		case a == "-r" && !last:
			c.Repeat, _ = strconv.ParseInt(leadingInt(next()), 10, 64)
		case a == "-i" && !last:
			secs, _ := strconv.ParseFloat(strings.TrimSpace(next()), 64)
			c.Interval = time.Duration(secs * float64(time.Second))
		case a == "-n" && !last:
			c.DB = atoi(next())
		case a == "--no-auth-warning":
			c.NoAuthWarning = true
		case (a == "-a" || a == "--pass") && !last:
			c.Auth = next()
		case a == "--user" && !last:
			c.User = next()
		case a == "-u" && !last:
			if err := parseURI(next(), c); err != nil {
				return nil, err
			}
		case a == "--raw":
			c.Output, c.OutputExplicit = OutputRaw, true
		case a == "--no-raw":
			c.Output, c.OutputExplicit = OutputStandard, true
		case a == "--csv":
			c.Output, c.OutputExplicit = OutputCSV, true
		case a == "--latency":
			c.Latency = true
		case a == "--latency-history":
			c.Latency, c.LatencyHistory = true, true
		case a == "--stat":
			c.Stat = true
		case a == "--locks":
			c.Locks = true
		case a == "--scan":
			c.Scan = true
		case a == "--pattern" && !last:
			c.Pattern = next()
		case a == "--count" && !last:
			c.Count, c.CountSet = atoi(next()), true
		case a == "--pipe":
			c.Pipe = true
		case a == "--pipe-timeout" && !last:
			c.PipeTimeout = time.Duration(atoi(next())) * time.Second
		case a == "-d" && !last:
			c.MBDelim = next()
		case a == "-D" && !last:
			c.CmdDelim = next()
		case a == "-e":
			c.SetErrCode = true
		case a == "-2":
			c.Resp2 = true
		case a == "-3":
			c.Resp3 = true
		case a == "--show-pushes" && !last:
			v := next()
			switch {
			case strings.HasPrefix(strings.ToLower(v), "n"):
				c.PushOutput, c.PushExplicit = false, true
			case strings.HasPrefix(strings.ToLower(v), "y"):
				c.PushOutput, c.PushExplicit = true, true
			default:
				fmt.Fprintf(stderr, "Unknown --show-pushes value '%s' (valid: '[y]es', '[n]o')\n", v)
			}
		case a == "-v" || a == "--version":
			fmt.Fprintf(stdout, "hotkv-cli %s\n", Version)
			return nil, &exitRequest{0}
		default:
			if strings.HasPrefix(a, "-") {
				return nil, &usageError{fmt.Sprintf("Unrecognized option or bad number of args for: '%s'", a)}
			}
			c.Args = args[i:]
			i = len(args)
		}
	}
	if c.Resp2 && c.Resp3 {
		return nil, &usageError{"Options -2 and -3 are mutually exclusive."}
	}
	if c.Auth == "" {
		if v := getenv("HOTKVCLI_AUTH"); v != "" {
			c.Auth = v
		} else if v := getenv("REDISCLI_AUTH"); v != "" {
			c.Auth = v
		}
	} else if !c.NoAuthWarning {
		fmt.Fprintln(stderr, "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe.")
	}
	return c, nil
}

// parseURI reads redis://[[user:]password@]host[:port][/db] into c, as
// redis-cli's parseRedisUri does (percent-decoding the credentials).
func parseURI(uri string, c *Config) error {
	const scheme = "redis://"
	if len(uri) < len(scheme) || !strings.EqualFold(uri[:len(scheme)], scheme) {
		if strings.HasPrefix(strings.ToLower(uri), "rediss://") {
			return &usageError{"TLS (rediss://) is not supported by hotkv-cli"}
		}
		return &usageError{"Invalid URI scheme"}
	}
	cur := uri[len(scheme):]
	if cur == "" {
		return nil
	}
	if at := strings.IndexByte(cur, '@'); at >= 0 {
		info := cur[:at]
		if colon := strings.IndexByte(info, ':'); colon >= 0 {
			user, err := percentDecode(info[:colon])
			if err != nil {
				return err
			}
			c.User = user
			info = info[colon+1:]
		}
		pass, err := percentDecode(info)
		if err != nil {
			return err
		}
		c.Auth = pass
		cur = cur[at+1:]
	}
	if cur == "" {
		return nil
	}
	path := strings.IndexByte(cur, '/')
	if cur[0] != '/' {
		hostport := cur
		if path >= 0 {
			hostport = cur[:path]
		}
		if strings.HasPrefix(hostport, "[") {
			if end := strings.IndexByte(hostport, ']'); end > 0 {
				c.Host = hostport[1:end]
				if rest := hostport[end+1:]; strings.HasPrefix(rest, ":") {
					c.Port = atoi(rest[1:])
				}
				hostport = ""
			}
		}
		if hostport != "" {
			if colon := strings.IndexByte(hostport, ':'); colon >= 0 {
				c.Port = atoi(hostport[colon+1:])
				hostport = hostport[:colon]
			}
			c.Host = hostport
		}
	}
	if path < 0 {
		return nil
	}
	if db := cur[path+1:]; db != "" {
		c.DB = atoi(db)
	}
	if c.Port < 0 || c.Port > 65535 {
		return &usageError{"Invalid server port."}
	}
	return nil
}

func percentDecode(s string) (string, error) {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if len(s)-i < 3 {
			return "", &usageError{"Incomplete URI encoding"}
		}
		h, l := lower(s[i+1]), lower(s[i+2])
		if !isLowerHex(h) || !isLowerHex(l) {
			return "", &usageError{"Illegal character in URI encoding"}
		}
		b = append(b, hexVal(h)<<4|hexVal(l))
		i += 2
	}
	return string(b), nil
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isLowerHex(c byte) bool { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') }

// atoi is C's atoi: leading blanks, an optional sign, digits; 0 otherwise.
func atoi(s string) int {
	n, _ := strconv.Atoi(leadingInt(s))
	return n
}

func leadingInt(s string) string {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	return s[:end]
}

func usage(w io.Writer) {
	fmt.Fprintf(w, `hotkv-cli %s

Usage: hotkv-cli [OPTIONS] [cmd [arg [arg ...]]]
       hotkv-cli [OPTIONS] tour locks [--auto]
  -h <hostname>      Server hostname (default: 127.0.0.1).
  -p <port>          Server port (default: 6379).
  -s <socket>        Server socket (overrides hostname and port).
  -a <password>      Password to use when connecting to the server.
                     You can also use the HOTKVCLI_AUTH (or REDISCLI_AUTH)
                     environment variable to pass this password more safely
                     (if both are used, this argument takes precedence).
  --user <username>  Used to send ACL style 'AUTH username pass'. Needs -a.
  --pass <password>  Alias of -a for consistency with the new --user option.
  -u <uri>           Server URI: redis://[[user:]password@]host[:port][/db].
  -r <repeat>        Execute specified command N times.
  -i <interval>      When -r is used, waits <interval> seconds per command.
                     It is possible to specify sub-second times like -i 0.1.
                     This interval is also used in --scan per cycle.
  -n <db>            Database number.
  -2                 Start session in RESP2 protocol mode.
  -3                 Start session in RESP3 protocol mode.
  -x                 Read last argument from STDIN.
  -d <delimiter>     Delimiter between response bulks for raw formatting (default: \n).
  -D <delimiter>     Delimiter between responses for raw formatting (default: \n).
  -e                 Return exit error code when command execution fails.
  --raw              Use raw formatting for replies (default when STDOUT is
                     not a tty).
  --no-raw           Force formatted output even when STDOUT is not a tty.
  --csv              Output in CSV format.
  --show-pushes <yn> Whether to print RESP3 PUSH messages.  Enabled by default when
                     STDOUT is a tty but can be overridden with --show-pushes no.
  --stat             Print rolling stats about server: mem, clients, ...
  --latency          Enter a special mode continuously sampling latency.
                     If you use this mode in an interactive session it runs
                     forever displaying real-time stats. Otherwise if --raw or
                     --csv is specified, or if you redirect the output to a non
                     TTY, it samples the latency for 1 second (you can use
                     -i to change the interval), then produces a single output
                     and exits.
  --latency-history  Like --latency but tracking latency changes over time.
                     Default time interval is 15 sec. Change it using -i.
  --pipe             Transfer raw RESP protocol from stdin to server.
  --pipe-timeout <n> In --pipe mode, abort with error if after sending all data.
                     no reply is received within <n> seconds.
                     Default timeout: 30. Use 0 to wait forever.
  --locks            HotKV: show the locks held (HOTKV.LOCKS): counters and the
                     lock table with holder token digest, age and TTL; redrawn
                     every second on a terminal (-i to change), printed once
                     otherwise. --pattern and --count filter the table.
  --scan             List all keys using the SCAN command.
  --pattern <pat>    Keys pattern when using the --scan option (default: *).
  --count <count>    Count option when using the --scan option (default: 10).
  --no-auth-warning  Don't show warning message when using password on command
                     line interface.
  --help             Output this help and exit.
  --version          Output version and exit.

Examples:
  cat /etc/passwd | hotkv-cli -x set mypasswd
  hotkv-cli get mypasswd
  hotkv-cli -r 100 lpush mylist x
  hotkv-cli -r 100 -i 1 info | grep used_memory_human:
  hotkv-cli --scan --pattern '*:12345*'
  hotkv-cli tour locks

When no command is given, hotkv-cli starts in interactive mode.
Type "help" in interactive mode for information on available commands
and settings.

`, Version)
}
