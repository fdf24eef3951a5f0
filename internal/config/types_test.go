package config

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// setCase is one CONFIG SET name value on a fresh Config: either it fails
// with err (Redis's full reply text without '-'), or CONFIG GET name then
// prints want.
type setCase struct {
	name, val string
	want      string
	err       string
}

// failed builds Redis's "CONFIG SET failed" text for name.
func failed(name, text string) string {
	return "ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + text
}

func runSetCases(t *testing.T, setup func(*Config), cases []setCase) {
	t.Helper()
	for _, tc := range cases {
		c := New()
		if setup != nil {
			setup(c)
		}
		err := c.Set([2]string{tc.name, tc.val})
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("CONFIG SET %s %q: err = %v, want %q", tc.name, tc.val, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("CONFIG SET %s %q: %v", tc.name, tc.val, err)
			continue
		}
		if got, _ := c.Get(tc.name); got != tc.want {
			t.Errorf("CONFIG SET %s %q; CONFIG GET = %q, want %q", tc.name, tc.val, got, tc.want)
		}
	}
}

// config.c boolConfigSet, yesnotoi.
func TestSetBool(t *testing.T) {
	yn := "argument must be 'yes' or 'no'"
	runSetCases(t, nil, []setCase{
		{name: "replica-lazy-flush", val: "yes", want: "yes"},
		{name: "replica-lazy-flush", val: "YES", want: "yes"},
		{name: "replica-lazy-flush", val: "No", want: "no"},
		{name: "replica-lazy-flush", val: "yes\x00junk", want: "yes"}, // a C string
		{name: "replica-lazy-flush", val: "1", err: failed("replica-lazy-flush", yn)},
		{name: "replica-lazy-flush", val: "", err: failed("replica-lazy-flush", yn)},
		{name: "replica-lazy-flush", val: "true", err: failed("replica-lazy-flush", yn)},
		// a durability HotKV cannot give is refused, not stored
		{name: "appendonly", val: "no", want: "no"},
		{name: "appendonly", val: "yes", want: "yes"},
		{name: "aof-use-rdb-preamble", val: "no", want: "no"},
		{name: "appendonly", val: "1", err: failed("appendonly", yn)},
		{name: "slave-read-only", val: "no", want: "no"},
		{name: "slave-read-only", val: "x", err: failed("slave-read-only", yn)},
		{name: "activedefrag", val: "no", want: "no"},
		{name: "activedefrag", val: "yes", err: failed("activedefrag", "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution")},
	})
}

// config.c numericParseString and numericBoundaryCheck.
func TestSetInt(t *testing.T) {
	notInt := "argument couldn't be parsed into an integer"
	runSetCases(t, nil, []setCase{
		{name: "port", val: "7000", want: "7000"},
		{name: "port", val: "0", want: "0"},
		{name: "port", val: "65535", want: "65535"},
		{name: "port", val: "65536", err: failed("port", "argument must be between 0 and 65535 inclusive")},
		{name: "port", val: "-1", err: failed("port", "argument must be between 0 and 65535 inclusive")},
		{name: "port", val: "abc", err: failed("port", notInt)},
		{name: "port", val: "007", err: failed("port", notInt)},
		{name: "port", val: "+1", err: failed("port", notInt)},
		{name: "port", val: " 1", err: failed("port", notInt)},
		{name: "port", val: "1k", err: failed("port", notInt)},
		{name: "port", val: "", err: failed("port", notInt)},
		{name: "maxclients", val: "4294967295", want: "4294967295"},
		{name: "maxclients", val: "0", err: failed("maxclients", "argument must be between 1 and 4294967295 inclusive")},
		{name: "maxclients", val: "-1", err: failed("maxclients", "argument must be between 1 and 4294967295 inclusive")},
		{name: "slowlog-max-len", val: "-1", err: failed("slowlog-max-len", "argument must be between 0 and 9223372036854775807 inclusive")},
		{name: "slowlog-log-slower-than", val: "-1", want: "-1"},
		{name: "slowlog-log-slower-than", val: "-2", err: failed("slowlog-log-slower-than", "argument must be between -1 and 9223372036854775807 inclusive")},
		{name: "hash-max-listpack-entries", val: "-1", err: failed("hash-max-listpack-entries", "argument must be between 0 and 9223372036854775807 inclusive")},
		{name: "list-max-ziplist-size", val: "-5", want: "-5"},
		{name: "list-max-listpack-size", val: "-2147483649", err: failed("list-max-listpack-size", "argument must be between -2147483648 and 2147483647 inclusive")},
		{name: "active-expire-effort", val: "11", err: failed("active-expire-effort", "argument must be between 1 and 10 inclusive")},
		{name: "hz", val: "100", want: "100"},
		{name: "hz", val: "1000", want: "500"}, // updateHZ clamps
		{name: "hz", val: "0", want: "1"},
		{name: "hz", val: "-1", err: failed("hz", "argument must be between 0 and 2147483647 inclusive")},
		{name: "lua-time-limit", val: "100", want: "100"},
		{name: "LUA-TIME-LIMIT", val: "x", err: failed("lua-time-limit", notInt)},
		{name: "MAXCLIENTS", val: "0", err: failed("maxclients", "argument must be between 1 and 4294967295 inclusive")},
		{name: "tracking-table-max-keys", val: "9223372036854775807", want: "9223372036854775807"},
		{name: "tracking-table-max-keys", val: "9223372036854775808", err: failed("tracking-table-max-keys", notInt)},
	})
}

// config.c MEMORY_CONFIG and PERCENT_CONFIG numerics; util.c memtoull.
func TestSetMemory(t *testing.T) {
	mem := "argument must be a memory value"
	runSetCases(t, nil, []setCase{
		{name: "maxmemory", val: "1gb", want: "1073741824"},
		{name: "maxmemory", val: "1GB", want: "1073741824"},
		{name: "maxmemory", val: "100mb", want: "104857600"},
		{name: "maxmemory", val: "1k", want: "1000"},
		{name: "maxmemory", val: "1kb", want: "1024"},
		{name: "maxmemory", val: "2m", want: "2000000"},
		{name: "maxmemory", val: "3g", want: "3000000000"},
		{name: "maxmemory", val: "007", want: "7"},
		{name: "maxmemory", val: "", want: "0"},
		{name: "maxmemory", val: "99999999999999999999999", want: "18446744073709551615"},
		{name: "maxmemory", val: "-1", err: failed("maxmemory", mem)},
		{name: "maxmemory", val: "1x", err: failed("maxmemory", mem)},
		{name: "maxmemory", val: "1.5gb", err: failed("maxmemory", mem)},
		{name: "maxmemory", val: "10%", err: failed("maxmemory", mem)},
		{name: "proto-max-bulk-len", val: "1mb", want: "1048576"},
		{name: "proto-max-bulk-len", val: "1000", err: failed("proto-max-bulk-len", "argument must be between 1048576 and 9223372036854775807 inclusive")},
		{name: "proto-max-bulk-len", val: "18446744073709551615", err: failed("proto-max-bulk-len", "argument must be between 1048576 and 9223372036854775807 inclusive")},
		{name: "client-query-buffer-limit", val: "1048575", err: failed("client-query-buffer-limit", "argument must be between 1048576 and 9223372036854775807 inclusive")},
		{name: "client-query-buffer-limit", val: "2gb", want: "2147483648"},
		{name: "hash-max-ziplist-value", val: "1kb", want: "1024"},
		{name: "maxmemory-clients", val: "10%", want: "10%"},
		{name: "maxmemory-clients", val: "100%", want: "100%"},
		{name: "maxmemory-clients", val: "0%", want: "0"},
		{name: "maxmemory-clients", val: "1mb", want: "1048576"},
		{name: "maxmemory-clients", val: "101%", err: failed("maxmemory-clients", "percentage argument must be less or equal to 100")},
		{name: "maxmemory-clients", val: "-1", err: failed("maxmemory-clients", "argument must be a memory or percent value")},
		{name: "maxmemory-clients", val: "-1%", err: failed("maxmemory-clients", "argument must be a memory or percent value")},
		{name: "maxmemory-clients", val: "%", err: failed("maxmemory-clients", "argument must be a memory or percent value")},
		// Redis stores memtoull's unsigned result in a signed ssize_t, so
		// 2^64-1 reads as -1, which is 1%.
		{name: "maxmemory-clients", val: "18446744073709551615", want: "1%"},
	})
}

// config.c enumConfigSet and configEnumGetName.
func TestSetEnum(t *testing.T) {
	runSetCases(t, nil, []setCase{
		{name: "loglevel", val: "warning", want: "warning"},
		{name: "loglevel", val: "WARNING", want: "warning"},
		{name: "loglevel", val: "nothing", want: "nothing"},
		{name: "loglevel", val: "notice warning", err: failed("loglevel", "argument(s) must be one of the following: debug, verbose, notice, warning, nothing")},
		{name: "loglevel", val: "", err: failed("loglevel", "argument(s) must be one of the following: debug, verbose, notice, warning, nothing")},
		{name: "maxmemory-policy", val: "allkeys-lru", want: "allkeys-lru"},
		{name: "maxmemory-policy", val: "volatile-lrm", want: "volatile-lrm"},
		{name: "maxmemory-policy", val: "lru", err: failed("maxmemory-policy", "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, volatile-lrm, allkeys-lru, allkeys-lfu, allkeys-random, allkeys-lrm, noeviction")},
		{name: "appendfsync", val: "ALWAYS", want: "always"},
		{name: "oom-score-adj", val: "relative", want: "yes"}, // the first name of the value
		{name: "oom-score-adj", val: "absolute", want: "absolute"},
		{name: "acl-pubsub-default", val: "allchannels", want: "allchannels"},
		{name: "propagation-error-behavior", val: "panic-on-replicas", want: "panic-on-replicas"},
	})
}

// config.c stringConfigSet/sdsConfigSet and their validators.
func TestSetString(t *testing.T) {
	protectedOn := func(c *Config) { loadString(t, c, "enable-protected-configs yes") }
	runSetCases(t, nil, []setCase{
		{name: "requirepass", val: "secret", want: "secret"},
		{name: "requirepass", val: "", want: ""},
		{name: "requirepass", val: "a\x00b", want: "a\x00b"}, // sds: binary-safe
		{name: "masteruser", val: "bob", want: "bob"},
		{name: "ignore-warnings", val: "x\x00y", want: "x"}, // char*: cut at NUL
		{name: "replica-announce-ip", val: "10.0.0.1", want: "10.0.0.1"},
		{name: "dbfilename", val: "x.rdb", err: failed("dbfilename", "can't set protected config")},
	})
	runSetCases(t, protectedOn, []setCase{
		{name: "dbfilename", val: "x.rdb", want: "x.rdb"},
		{name: "dbfilename", val: "", want: ""},
		{name: "dbfilename", val: "a/b", err: failed("dbfilename", "dbfilename can't be a path, just a filename")},
		{name: "dbfilename", val: `a\b`, err: failed("dbfilename", "dbfilename can't be a path, just a filename")},
	})
	c := New()
	if err := c.Set([2]string{"requirepass", "pw"}, [2]string{"requirepass", "pw"}); err == nil {
		t.Error("duplicate requirepass accepted")
	}
}

// config.c setConfigSaveOption; HotKV's default save is "".
func TestSetSave(t *testing.T) {
	bad := failed("save", "Invalid save parameters")
	runSetCases(t, nil, []setCase{
		{name: "save", val: "900 1 300 10", want: "900 1 300 10"},
		{name: "save", val: "", want: ""},
		{name: "save", val: "+5 +0", want: "5 0"},
		{name: "save", val: "5 4294967296", want: "5 0"}, // changes is a C int
		{name: "save", val: "5 2147483648", want: "5 -2147483648"},
		{name: "save", val: "900", err: bad},
		{name: "save", val: "0 1", err: bad},
		{name: "save", val: "1 -1", err: bad},
		{name: "save", val: "900  1", err: bad}, // split on single spaces: an empty word
		{name: "save", val: " 900 1", err: bad},
		{name: "save", val: "1x 1", err: bad},
	})
	c := New()
	mustSet(t, c, "save", "900 1")
	mustSet(t, c, "save", "60 5") // CONFIG SET replaces; only a file accumulates
	if got := c.String("save"); got != "60 5" {
		t.Errorf("save = %q", got)
	}
	if got := c.Save(); !slices.Equal(got, []SavePoint{{60, 5}}) {
		t.Errorf("Save() = %v", got)
	}
}

// config.c updateClientOutputBufferLimit.
func TestSetClientOutputBufferLimit(t *testing.T) {
	name := "client-output-buffer-limit"
	def := "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
	runSetCases(t, nil, []setCase{
		{name: name, val: "", want: def},
		{name: name, val: "NORMAL 1k 2kb 4294967296", want: "normal 1000 2048 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"},
		{name: name, val: "replica 1 2 3 pubsub 4 5 6", want: "normal 0 0 0 slave 1 2 3 pubsub 4 5 6"},
		{name: name, val: def, want: def},
		{name: name, val: "normal 1 2", err: failed(name, "Wrong number of arguments in buffer limit configuration.")},
		{name: name, val: "master 1 2 3", err: failed(name, "Invalid client class specified in buffer limit configuration.")},
		{name: name, val: "normal 1x 2 3", err: failed(name, "Error in hard, soft or soft_seconds setting in buffer limit configuration.")},
		{name: name, val: "normal 1 2 -3", err: failed(name, "Error in hard, soft or soft_seconds setting in buffer limit configuration.")},
		{name: name, val: "normal 1 2 2147483648", err: failed(name, "Error in hard, soft or soft_seconds setting in buffer limit configuration.")},
		// A bad class after a good one rejects the whole value.
		{name: name, val: "normal 1 2 3 bogus 1 2 3", err: failed(name, "Invalid client class specified in buffer limit configuration.")},
	})
	c := New()
	mustSet(t, c, name, "pubsub 64mb 16mb 90")
	if got := c.ClientOutputBufferLimits(); got[2] != (OBufLimit{64 << 20, 16 << 20, 90}) || got[0] != (OBufLimit{}) {
		t.Errorf("ClientOutputBufferLimits() = %v", got)
	}
}

// notify.c keyspaceEventsStringToFlags / keyspaceEventsFlagsToString.
func TestSetNotifyKeyspaceEvents(t *testing.T) {
	name := "notify-keyspace-events"
	runSetCases(t, nil, []setCase{
		{name: name, val: "KEA", want: "AKE"},
		{name: name, val: "KEA$lgm", want: "AKEm"},
		{name: name, val: "x$lshzg", want: "g$lshzx"},
		{name: name, val: "g$lshzxetd", want: "A"},
		{name: name, val: "Eoc", want: "ocE"},
		{name: name, val: "AKEn", want: "AKE"}, // Redis does not print n beside A
		{name: name, val: "Ex", want: "xE"},
		{name: name, val: "", want: ""},
		{name: name, val: "KQ", err: failed(name, "Invalid event class character. Use 'Ag$lshzxeKEtmdnoc'.")},
		{name: name, val: "K E", err: failed(name, "Invalid event class character. Use 'Ag$lshzxeKEtmdnoc'.")},
	})
	c := New()
	mustSet(t, c, name, "AKEn")
	if f := c.NotifyKeyspaceEvents(); f != NotifyAll|NotifyKeyspace|NotifyKeyevent|NotifyNew {
		t.Errorf("flags = %b", f)
	}
	for s, want := range map[string]NotifyFlags{"": 0, "Km": NotifyKeyspace | NotifyKeyMiss, "A": NotifyAll} {
		if f, ok := ParseNotifyFlags(s); !ok || f != want {
			t.Errorf("ParseNotifyFlags(%q) = %b, %v", s, f, ok)
		}
	}
}

// config.c setConfigBindOption; HotKV's default bind is 127.0.0.1.
func TestSetBind(t *testing.T) {
	many := strings.TrimSpace(strings.Repeat("127.0.0.1 ", 17))
	runSetCases(t, nil, []setCase{
		{name: "bind", val: "127.0.0.1 ::1", want: "127.0.0.1 ::1"},
		{name: "bind", val: "* -::*", want: "* -::*"},
		{name: "bind", val: "", want: ""},
		{name: "bind", val: many[:len(many)-10], want: many[:len(many)-10]}, // 16 addresses
		{name: "bind", val: many, err: failed("bind", "Too many bind addresses specified.")},
	})
	c := New()
	if got := c.Bind(); !slices.Equal(got, []string{"127.0.0.1"}) {
		t.Errorf("default Bind() = %q", got)
	}
	mustSet(t, c, "bind", "0.0.0.0 ::")
	if got := c.Bind(); !slices.Equal(got, []string{"0.0.0.0", "::"}) {
		t.Errorf("Bind() = %q", got)
	}
}

func TestSetOtherSpecials(t *testing.T) {
	lt := "latency-tracking-info-percentiles"
	oom := "oom-score-adj-values"
	runSetCases(t, nil, []setCase{
		{name: lt, val: "50 99 99.9", want: "50 99 99.9"},
		{name: lt, val: "0.0000001 99.99999999 5e1", want: "0 100 50"},
		{name: lt, val: "", want: ""},
		{name: lt, val: "50 101", err: failed(lt, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")},
		{name: lt, val: "50 x", err: failed(lt, "Invalid latency-tracking-info-percentiles parameters")},
		{name: lt, val: "50  99", err: failed(lt, "Invalid latency-tracking-info-percentiles parameters")},
		{name: lt, val: "nan", err: failed(lt, "Invalid latency-tracking-info-percentiles parameters")},
		{name: oom, val: "-2000 0 2000", want: "-2000 0 2000"},
		{name: oom, val: "1 2", err: failed(oom, "wrong number of arguments")},
		{name: oom, val: "1 2 3000", err: failed(oom, "Invalid oom-score-adj-values, elements must be between -2000 and 2000.")},
		{name: "replicaof", val: "no one", err: failed("replicaof", "can't set immutable config")},
		{name: "slaveof", val: "no one", err: failed("slaveof", "can't set immutable config")},
	})
	if got := New().LatencyPercentiles(); !slices.Equal(got, []float64{50, 99, 99.9}) {
		t.Errorf("LatencyPercentiles() = %v", got)
	}
}

// config.c setConfigDirOption; dir is a protected parameter.
func TestSetDir(t *testing.T) {
	tmp := t.TempDir()
	real, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(tmp, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(tmp, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	runSetCases(t, nil, []setCase{{name: "dir", val: tmp, err: failed("dir", "can't set protected config")}})
	on := func(c *Config) { loadString(t, c, "enable-protected-configs yes\ndir "+repr(tmp)) }
	runSetCases(t, on, []setCase{
		{name: "dir", val: tmp, want: real},
		{name: "dir", val: "sub", want: filepath.Join(real, "sub")}, // relative to the current dir, like chdir
		{name: "dir", val: filepath.Join(tmp, "nope"), err: failed("dir", "No such file or directory")},
		{name: "dir", val: file, err: failed("dir", "Not a directory")},
	})
	if wd, _ := os.Getwd(); New().String("dir") != wd {
		t.Errorf("default dir = %q, want %q", New().String("dir"), wd)
	}
}

func TestProtectedLocal(t *testing.T) {
	c := New()
	loadString(t, c, "enable-protected-configs local")
	pair := [2]string{"dbfilename", "y.rdb"}
	if err := c.SetFrom(false, pair); err == nil || err.Error() != failed("dbfilename", "can't set protected config") {
		t.Errorf("remote client: %v", err)
	}
	if err := c.SetFrom(true, pair); err != nil {
		t.Errorf("local client: %v", err)
	}
}

// Every mutable parameter accepts what CONFIG GET prints for it, under its
// name and its alias, and the value stays the same. Every immutable one is
// refused.
func TestSetGetRoundTrip(t *testing.T) {
	c := New()
	loadString(t, c, "enable-protected-configs yes")
	for _, p := range c.Params() {
		for _, name := range []string{p.Name, p.Alias} {
			if name == "" {
				continue
			}
			before, _ := c.Get(name)
			err := c.Set([2]string{name, before})
			if !p.Mutable {
				if err == nil || err.Error() != failed(name, "can't set immutable config") {
					t.Errorf("immutable %s: %v", name, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("CONFIG SET %s %q: %v", name, before, err)
			}
			if after, _ := c.Get(name); after != before {
				t.Errorf("%s: %q became %q", name, before, after)
			}
		}
	}
}

func TestGetters(t *testing.T) {
	c := New()
	if c.Int("port") != 6379 || c.Int("PORT") != 6379 || c.Int("databases") != 16 ||
		c.Int("proto-max-bulk-len") != 512<<20 || c.Int("lua-time-limit") != 5000 {
		t.Error("integer defaults")
	}
	if !c.Bool("protected-mode") || c.Bool("appendonly") {
		t.Error("bool defaults")
	}
	if c.String("loglevel") != "notice" || c.String("maxmemory-policy") != "noeviction" ||
		c.String("requirepass") != "" || c.String("save") != "" || c.String("bind") != "127.0.0.1" {
		t.Error("string defaults")
	}
	port := c.IntFunc("port")
	mustSet(t, c, "port", "7000")
	if port() != 7000 {
		t.Errorf("IntFunc = %d", port())
	}
	mustSet(t, c, "maxmemory", "18446744073709551615")
	if c.Int("maxmemory") != math.MaxInt64 {
		t.Errorf("Int(maxmemory) = %d", c.Int("maxmemory"))
	}
	mustSet(t, c, "maxmemory-clients", "10%")
	if c.Int("maxmemory-clients") != -10 {
		t.Errorf("Int(maxmemory-clients) = %d", c.Int("maxmemory-clients"))
	}
	for _, f := range []func(){
		func() { c.Int("nosuch") },
		func() { c.Int("appendonly") },
		func() { c.Bool("port") },
		func() { c.String("port") },
		func() { c.IntFunc("loglevel") },
		func() { c.OnChange("nosuch", nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
	if _, ok := c.Get("nosuch"); ok {
		t.Error("Get(nosuch) ok")
	}
}

// The table documents itself: the honoured set is exactly what the server
// wires, and every row is consistent.
func TestParams(t *testing.T) {
	var honoured []string
	for _, p := range New().Params() {
		if p.Honoured {
			honoured = append(honoured, p.Name)
		}
		if p.Doc == "" {
			t.Errorf("%s has no doc", p.Name)
		}
		if p.Kind == KindEnum && !slices.Contains(p.Values, p.Default) {
			t.Errorf("%s: default %q not among %q", p.Name, p.Default, p.Values)
		}
	}
	slices.Sort(honoured)
	// the parameters the server acts on today (README "Configuration")
	want := []string{"bind", "busy-reply-threshold", "client-output-buffer-limit", "client-query-buffer-limit",
		"databases", "enable-debug-command", "hash-max-listpack-entries", "hash-max-listpack-value",
		"hll-sparse-max-bytes", "hz", "io-threads", "latency-tracking", "latency-tracking-info-percentiles",
		"lazyexpire-nested-arbitrary-keys", "lazyfree-lazy-eviction", "lazyfree-lazy-expire", "lazyfree-lazy-server-del",
		"lazyfree-lazy-user-del", "lazyfree-lazy-user-flush",
		"lfu-decay-time", "lfu-log-factor", "list-max-listpack-size", "logfile", "loglevel", "maxclients",
		"maxmemory", "maxmemory-eviction-tenacity", "maxmemory-policy", "maxmemory-samples", "min-replicas-max-lag",
		"min-replicas-to-write", "notify-keyspace-events", "port", "proto-max-bulk-len", "repl-ping-replica-period", "requirepass",
		"set-max-intset-entries", "set-max-listpack-entries", "set-max-listpack-value", "tcp-keepalive",
		"timeout", "tracking-table-max-keys", "zset-max-listpack-entries", "zset-max-listpack-value",
		// RDB snapshots (decision 0027)
		"dbfilename", "dir", "rdbchecksum", "rdbcompression", "save", "shutdown-on-sigint", "shutdown-on-sigterm",
		"key-load-delay", "rdb-key-save-delay", "loading-process-events-interval-bytes",
		"stop-writes-on-bgsave-error",
		// the process, as Redis's test harness starts it
		"unixsocket", "unixsocketperm", "pidfile", "always-show-logo",
		// streams: node limits, and the IDMP settings of new streams (decision 0039)
		"stream-node-max-bytes", "stream-node-max-entries", "stream-idmp-duration", "stream-idmp-maxsize",
		// clients' memory, and the gates: MODULE, protected parameters, cluster mode (yes refused)
		"maxmemory-clients", "enable-module-command", "enable-protected-configs", "cluster-enabled",
		// full syncs' scheduling and a replica's flush (decision 0053)
		"repl-diskless-sync-delay", "repl-diskless-sync-max-replicas", "replica-lazy-flush",
		// the append-only file (decision 0043)
		"appendonly", "appendfilename", "appenddirname", "appendfsync", "no-appendfsync-on-rewrite",
		"auto-aof-rewrite-percentage", "auto-aof-rewrite-min-size", "aof-load-truncated",
		"aof-load-corrupt-tail-max-size", "aof-use-rdb-preamble", "aof-timestamp-enabled", "aof-disable-auto-gc",
		// eviction protection of locks (decision 0044)
		"protect-locks-from-eviction",
		// the metrics listener (decision 0048)
		"metrics-port", "metrics-bind",
		// snapshots written a step at a time (decision 0045)
		"rdb-save-incremental-fsync", "aof-rewrite-incremental-fsync",
		// ACL users (decision 0046)
		"aclfile", "acllog-max-len", "acl-pubsub-default", "protected-mode",
		// TLS (decision 0047)
		"tls-port", "tls-auth-clients", "tls-auth-clients-user", "tls-ca-cert-dir", "tls-ca-cert-file", "tls-cert-file",
		"tls-ciphers", "tls-ciphersuites", "tls-key-file", "tls-key-file-pass", "tls-protocols",
		"tls-session-cache-timeout", "tls-session-caching",
		// the replica side (replica.go)
		"replicaof", "masterauth", "masteruser", "replica-read-only", "replica-serve-stale-data",
		"replica-announce-ip", "replica-announce-port", "repl-timeout",
		// the backlog: partial resynchronisation (PSYNC2)
		"repl-backlog-size", "repl-backlog-ttl", "repl-rdb-channel", "repl-diskless-load",
		// rdb channel replication (decision 0052)
		"replica-full-sync-buffer-limit",
		// TLS replication: the replica's link
		"tls-replication", "tls-client-cert-file", "tls-client-key-file", "tls-client-key-file-pass"}
	slices.Sort(want)
	if !slices.Equal(honoured, want) {
		t.Errorf("honoured = %q", honoured)
	}
	p := New().Params()
	i := slices.IndexFunc(p, func(p ParamInfo) bool { return p.Name == "maxclients" })
	if p[i].Min != "1" || p[i].Max != "4294967295" || !p[i].Mutable {
		t.Errorf("maxclients info = %+v", p[i])
	}
	i = slices.IndexFunc(p, func(p ParamInfo) bool { return p.Name == "requirepass" })
	if !p[i].Sensitive {
		t.Error("requirepass not sensitive")
	}
}

func mustSet(t *testing.T, c *Config, name, val string) {
	t.Helper()
	if err := c.Set([2]string{name, val}); err != nil {
		t.Fatalf("CONFIG SET %s %q: %v", name, val, err)
	}
}

// loadString loads configuration text into c without a file.
func loadString(t *testing.T, c *Config, text string) {
	t.Helper()
	s := c.newSession()
	if err := s.loadString(text); err != nil {
		t.Fatalf("load %q: %v", text, err)
	}
	s.commit(c)
}
