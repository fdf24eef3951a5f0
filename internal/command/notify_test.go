package command_test

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/command"
	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// notifyCase is the keyspace events a sample invocation of one write command
// must publish, in order, as Redis 8.4 does. Events are written "event key"
// for database 0 and "<db>:event key" for another one, as received on the
// keyevent channels with notify-keyspace-events "EAnocm" (every class).
type notifyCase struct {
	setup  [][]string                       // commands run first (their events are discarded)
	cmd    []string                         // the sample invocation
	prep   func(c *hotkvtest.Conn) []string // builds cmd when it depends on the server (FUNCTION RESTORE)
	events []string
}

// writeEvents lists, for EVERY command and subcommand flagged Write in the
// table, the events of a sample invocation. TestNotifyEveryWriteCommand fails
// for a write command that is neither here nor in pendingNotifyGroups, so a new
// write command cannot land without its keyspace events being decided.
// Sources: Redis 8.4 t_string.c, bitops.c, db.c, expire.c, t_set.c, t_hash.c.
var writeEvents = map[string]notifyCase{
	// eviction protection (Redis 8.12)
	"bless|set":   {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"BLESS", "SET", "k", "NO-EVICT"}, events: []string{"bless k"}},
	"bless|clear": {setup: [][]string{{"SET", "k", "v"}, {"BLESS", "SET", "k", "NO-EVICT"}}, cmd: []string{"BLESS", "CLEAR", "k", "NO-EVICT"}, events: []string{"unbless k"}},
	// string
	"append":      {cmd: []string{"APPEND", "k", "x"}, events: []string{"new k", "append k"}},
	"decr":        {cmd: []string{"DECR", "k"}, events: []string{"new k", "incrby k"}},
	"decrby":      {setup: [][]string{{"SET", "k", "5"}}, cmd: []string{"DECRBY", "k", "2"}, events: []string{"incrby k"}},
	"incr":        {setup: [][]string{{"SET", "k", "5"}}, cmd: []string{"INCR", "k"}, events: []string{"incrby k"}},
	"incrby":      {cmd: []string{"INCRBY", "k", "3"}, events: []string{"new k", "incrby k"}},
	"incrbyfloat": {setup: [][]string{{"SET", "k", "1"}}, cmd: []string{"INCRBYFLOAT", "k", "1.5"}, events: []string{"incrbyfloat k"}},
	"delex":       {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"DELEX", "k", "IFEQ", "v"}, events: []string{"del k"}},
	"delifeq":     {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"DELIFEQ", "k", "v"}, events: []string{"del k"}},
	"getdel":      {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"GETDEL", "k"}, events: []string{"del k"}},
	"getex":       {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"GETEX", "k", "EX", "100"}, events: []string{"expire k"}},
	"getset":      {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"GETSET", "k", "w"}, events: []string{"overwritten k", "set k"}},
	"mset":        {setup: [][]string{{"SET", "a", "v"}}, cmd: []string{"MSET", "a", "1", "b", "2"}, events: []string{"overwritten a", "set a", "new b", "set b"}},
	"msetex": {setup: [][]string{{"SET", "a", "v"}}, cmd: []string{"MSETEX", "2", "a", "1", "b", "2", "PX", "100000"},
		events: []string{"overwritten a", "expire a", "set a", "new b", "expire b", "set b"}},
	"msetnx":   {cmd: []string{"MSETNX", "a", "1", "b", "2"}, events: []string{"new a", "set a", "new b", "set b"}},
	"psetex":   {cmd: []string{"PSETEX", "k", "1000", "v"}, events: []string{"new k", "set k", "expire k"}},
	"set":      {setup: [][]string{{"HSET", "k", "f", "v"}}, cmd: []string{"SET", "k", "v"}, events: []string{"overwritten k", "type_changed k", "set k"}},
	"setex":    {cmd: []string{"SETEX", "k", "10", "v"}, events: []string{"new k", "set k", "expire k"}},
	"setnx":    {cmd: []string{"SETNX", "k", "v"}, events: []string{"new k", "set k"}},
	"setrange": {setup: [][]string{{"SET", "k", "abc"}}, cmd: []string{"SETRANGE", "k", "1", "x"}, events: []string{"setrange k"}},

	// bitmap
	"setbit":   {cmd: []string{"SETBIT", "k", "3", "1"}, events: []string{"new k", "setbit k"}},
	"bitfield": {cmd: []string{"BITFIELD", "k", "SET", "u8", "0", "7"}, events: []string{"new k", "setbit k"}},
	"bitop":    {setup: [][]string{{"SET", "a", "x"}}, cmd: []string{"BITOP", "NOT", "d", "a"}, events: []string{"new d", "set d"}},

	// hyperloglog
	"pfadd":   {cmd: []string{"PFADD", "h", "a"}, events: []string{"new h", "pfadd h"}},
	"pfmerge": {setup: [][]string{{"PFADD", "a", "x"}}, cmd: []string{"PFMERGE", "d", "a"}, events: []string{"keymiss d", "new d", "pfadd d"}}, // Redis reads every key, the target too,
	"pfdebug": {setup: [][]string{{"PFADD", "h", "a"}}, cmd: []string{"PFDEBUG", "TODENSE", "h"}, events: nil},

	// stream (t_stream.c)
	"xadd":                  {cmd: []string{"XADD", "k", "MAXLEN", "1", "1-1", "f", "v"}, events: []string{"new k", "xadd k"}},
	"xtrim":                 {setup: [][]string{{"XADD", "k", "1-1", "f", "v"}, {"XADD", "k", "1-2", "f", "v"}}, cmd: []string{"XTRIM", "k", "MAXLEN", "1"}, events: []string{"xtrim k"}},
	"xdel":                  {setup: [][]string{{"XADD", "k", "1-1", "f", "v"}}, cmd: []string{"XDEL", "k", "1-1"}, events: []string{"xdel k"}},
	"xcfgset":               {setup: [][]string{{"XADD", "k", "1-1", "f", "v"}}, cmd: []string{"XCFGSET", "k", "IDMP-MAXSIZE", "5"}, events: nil},
	"xidmprecord":           {setup: [][]string{{"XADD", "k", "1-1", "f", "v"}}, cmd: []string{"XIDMPRECORD", "k", "p", "i", "1-1"}, events: nil},
	"xsetid":                {setup: [][]string{{"XADD", "k", "1-1", "f", "v"}}, cmd: []string{"XSETID", "k", "5-0"}, events: []string{"xsetid k"}},
	"xgroup|create":         {cmd: []string{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}, events: []string{"new k", "xgroup-create k"}},
	"xgroup|setid":          {setup: [][]string{{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}}, cmd: []string{"XGROUP", "SETID", "k", "g", "0"}, events: []string{"xgroup-setid k"}},
	"xgroup|destroy":        {setup: [][]string{{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}}, cmd: []string{"XGROUP", "DESTROY", "k", "g"}, events: []string{"xgroup-destroy k"}},
	"xgroup|createconsumer": {setup: [][]string{{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}}, cmd: []string{"XGROUP", "CREATECONSUMER", "k", "g", "c"}, events: []string{"xgroup-createconsumer k"}},
	"xgroup|delconsumer":    {setup: [][]string{{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}, {"XGROUP", "CREATECONSUMER", "k", "g", "c"}}, cmd: []string{"XGROUP", "DELCONSUMER", "k", "g", "c"}, events: []string{"xgroup-delconsumer k"}},
	"xreadgroup":            {setup: [][]string{{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}, {"XADD", "k", "1-1", "f", "v"}}, cmd: []string{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">"}, events: []string{"xgroup-createconsumer k"}},
	"xack":                  {setup: [][]string{{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}, {"XADD", "k", "1-1", "f", "v"}, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">"}}, cmd: []string{"XACK", "k", "g", "1-1"}, events: nil},
	"xclaim":                {setup: [][]string{{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}, {"XADD", "k", "1-1", "f", "v"}, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">"}}, cmd: []string{"XCLAIM", "k", "g", "d", "0", "1-1"}, events: []string{"xgroup-createconsumer k"}},
	"xdelex":                {setup: [][]string{{"XADD", "k", "1-1", "f", "v"}}, cmd: []string{"XDELEX", "k", "IDS", "1", "1-1"}, events: []string{"xdel k"}},
	"xackdel":               {setup: [][]string{{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}, {"XADD", "k", "1-1", "f", "v"}, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">"}}, cmd: []string{"XACKDEL", "k", "g", "IDS", "1", "1-1"}, events: []string{"xdel k"}},
	"xautoclaim":            {setup: [][]string{{"XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"}, {"XADD", "k", "1-1", "f", "v"}, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">"}}, cmd: []string{"XAUTOCLAIM", "k", "g", "d", "0", "0"}, events: []string{"xgroup-createconsumer k"}},

	// sort
	"sort": {setup: [][]string{{"SADD", "s", "2", "1"}}, cmd: []string{"SORT", "s", "STORE", "d"}, events: []string{"new d", "sortstore d"}},

	// geo (geo.c: GEOADD is ZADD; the STORE forms set the key, then announce)
	"geoadd": {cmd: []string{"GEOADD", "k", "13.361389", "38.115556", "Palermo"}, events: []string{"new k", "zadd k"}},
	"georadius": {setup: [][]string{{"GEOADD", "s", "13.361389", "38.115556", "Palermo"}, {"SET", "d", "x"}},
		cmd:    []string{"GEORADIUS", "s", "13", "38", "200", "km", "STORE", "d"},
		events: []string{"overwritten d", "type_changed d", "georadiusstore d"}},
	"georadiusbymember": {setup: [][]string{{"GEOADD", "s", "13.361389", "38.115556", "Palermo"}},
		cmd:    []string{"GEORADIUSBYMEMBER", "s", "Palermo", "1", "km", "STOREDIST", "d"},
		events: []string{"new d", "georadiusstore d"}},
	"geosearchstore": {setup: [][]string{{"GEOADD", "s", "13.361389", "38.115556", "Palermo"}, {"SET", "d", "x"}},
		cmd:    []string{"GEOSEARCHSTORE", "d", "s", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"},
		events: []string{"del d"}},

	// generic
	"copy": {setup: [][]string{{"SET", "a", "v"}, {"SADD", "b", "x"}}, cmd: []string{"COPY", "a", "b", "REPLACE"},
		events: []string{"new b", "copy_to b", "overwritten b", "type_changed b"}},
	// RESTORE REPLACE over a key of another type: dbAdd's "new", "restore",
	// then "overwritten" and "type_changed" (cluster.c restoreCommand)
	"restore": {setup: [][]string{{"SADD", "b", "x"}}, prep: func(c *hotkvtest.Conn) []string {
		c.Do("SET", "a", "v")
		payload := bulkPayload(c.Do("DUMP", "a"))
		c.Do("DEL", "a")
		return []string{"RESTORE", "b", "0", payload, "REPLACE"}
	}, events: []string{"new b", "restore b", "overwritten b", "type_changed b"}},
	// MIGRATE deletes what the target restored (migrateTarget: a second
	// server the test starts)
	"migrate": {setup: [][]string{{"SET", "a", "v"}}, prep: func(c *hotkvtest.Conn) []string {
		host, port, _ := strings.Cut(migrateTarget, ":")
		return []string{"MIGRATE", host, port, "a", "0", "5000", "REPLACE"}
	}, events: []string{"del a"}},
	// RESTORE-ASKING is RESTORE (the same restoreCommand)
	"restore-asking": {prep: func(c *hotkvtest.Conn) []string {
		c.Do("SET", "a", "v")
		payload := bulkPayload(c.Do("DUMP", "a"))
		c.Do("DEL", "a")
		return []string{"RESTORE-ASKING", "b", "0", payload}
	}, events: []string{"new b", "restore b"}},
	"del":       {setup: [][]string{{"SET", "a", "v"}}, cmd: []string{"DEL", "a", "nokey"}, events: []string{"del a"}},
	"unlink":    {setup: [][]string{{"SET", "a", "v"}}, cmd: []string{"UNLINK", "nokey", "a"}, events: []string{"del a"}},
	"expire":    {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"EXPIRE", "k", "100"}, events: []string{"expire k"}},
	"expireat":  {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"EXPIREAT", "k", "1"}, events: []string{"del k"}},
	"pexpire":   {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"PEXPIRE", "k", "-1"}, events: []string{"del k"}},
	"pexpireat": {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"PEXPIREAT", "k", "99999999999999"}, events: []string{"expire k"}},
	"persist":   {setup: [][]string{{"SET", "k", "v", "EX", "100"}}, cmd: []string{"PERSIST", "k"}, events: []string{"persist k"}},
	"move":      {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"MOVE", "k", "1"}, events: []string{"1:new k", "move_from k", "1:move_to k"}},
	"rename": {setup: [][]string{{"SET", "a", "v"}, {"SET", "b", "w"}}, cmd: []string{"RENAME", "a", "b"},
		events: []string{"new b", "rename_from a", "rename_to b", "overwritten b"}},
	"renamenx": {setup: [][]string{{"SET", "a", "v"}}, cmd: []string{"RENAMENX", "a", "b"}, events: []string{"new b", "rename_from a", "rename_to b"}},

	// server: no per-key events
	"flushall": {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"FLUSHALL"}},
	"flushdb":  {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"FLUSHDB"}},
	"swapdb":   {setup: [][]string{{"SET", "k", "v"}}, cmd: []string{"SWAPDB", "0", "1"}},

	// scripting: functions are not keys
	"function|load":   {cmd: []string{"FUNCTION", "LOAD", notifyLib}},
	"function|delete": {setup: [][]string{{"FUNCTION", "LOAD", notifyLib}}, cmd: []string{"FUNCTION", "DELETE", "notifylib"}},
	"function|flush":  {setup: [][]string{{"FUNCTION", "LOAD", notifyLib}}, cmd: []string{"FUNCTION", "FLUSH"}},
	"function|restore": {setup: [][]string{{"FUNCTION", "LOAD", notifyLib}}, prep: func(c *hotkvtest.Conn) []string {
		payload := bulkPayload(c.Do("FUNCTION", "DUMP"))
		c.Do("FUNCTION", "FLUSH")
		return []string{"FUNCTION", "RESTORE", payload}
	}},

	// hash
	"hdel":         {setup: [][]string{{"HSET", "k", "a", "1", "b", "2"}}, cmd: []string{"HDEL", "k", "a"}, events: []string{"hdel k"}},
	"hexpire":      {setup: [][]string{{"HSET", "k", "a", "1"}}, cmd: []string{"HEXPIRE", "k", "100", "FIELDS", "1", "a"}, events: []string{"hexpire k"}},
	"hexpireat":    {setup: [][]string{{"HSET", "k", "a", "1", "b", "2"}}, cmd: []string{"HEXPIREAT", "k", "1", "FIELDS", "1", "a"}, events: []string{"hdel k"}},
	"hpexpire":     {setup: [][]string{{"HSET", "k", "a", "1"}}, cmd: []string{"HPEXPIRE", "k", "0", "FIELDS", "1", "a"}, events: []string{"hdel k", "del k"}},
	"hpexpireat":   {setup: [][]string{{"HSET", "k", "a", "1"}}, cmd: []string{"HPEXPIREAT", "k", "1895936774000", "FIELDS", "1", "a"}, events: []string{"hexpire k"}},
	"hgetdel":      {setup: [][]string{{"HSET", "k", "a", "1"}}, cmd: []string{"HGETDEL", "k", "FIELDS", "1", "a"}, events: []string{"hdel k", "del k"}},
	"hgetex":       {setup: [][]string{{"HSET", "k", "a", "1"}}, cmd: []string{"HGETEX", "k", "EX", "100", "FIELDS", "1", "a"}, events: []string{"hexpire k"}},
	"hincrby":      {cmd: []string{"HINCRBY", "k", "a", "1"}, events: []string{"new k", "hincrby k"}},
	"hincrbyfloat": {cmd: []string{"HINCRBYFLOAT", "k", "a", "1.5"}, events: []string{"new k", "hincrbyfloat k"}},
	"hmset":        {cmd: []string{"HMSET", "k", "a", "1"}, events: []string{"new k", "hset k"}},
	"hpersist": {setup: [][]string{{"HSET", "k", "a", "1"}, {"HEXPIRE", "k", "100", "FIELDS", "1", "a"}},
		cmd: []string{"HPERSIST", "k", "FIELDS", "1", "a"}, events: []string{"hpersist k"}},
	"hset":   {setup: [][]string{{"SET", "x", "1"}}, cmd: []string{"HSET", "k", "a", "1"}, events: []string{"new k", "hset k"}},
	"hsetex": {cmd: []string{"HSETEX", "k", "EX", "100", "FIELDS", "1", "a", "1"}, events: []string{"new k", "hset k", "hexpire k"}},
	"hsetnx": {cmd: []string{"HSETNX", "k", "a", "1"}, events: []string{"new k", "hset k"}},

	// set
	"sadd": {cmd: []string{"SADD", "k", "a", "b"}, events: []string{"new k", "sadd k"}},
	"sdiffstore": {setup: [][]string{{"SADD", "a", "1", "2"}, {"SADD", "b", "2"}, {"SET", "d", "x"}}, cmd: []string{"SDIFFSTORE", "d", "a", "b"},
		events: []string{"overwritten d", "type_changed d", "sdiffstore d"}},
	"sinterstore": {setup: [][]string{{"SADD", "a", "1"}, {"SADD", "b", "1"}}, cmd: []string{"SINTERSTORE", "d", "a", "b"},
		events: []string{"new d", "sinterstore d"}},
	"smove": {setup: [][]string{{"SADD", "a", "x"}}, cmd: []string{"SMOVE", "a", "b", "x"},
		events: []string{"srem a", "del a", "new b", "sadd b"}},
	"spop": {setup: [][]string{{"SADD", "k", "x"}}, cmd: []string{"SPOP", "k"}, events: []string{"spop k", "del k"}},
	"srem": {setup: [][]string{{"SADD", "k", "x", "y"}}, cmd: []string{"SREM", "k", "x", "z"}, events: []string{"srem k"}},
	"sunionstore": {setup: [][]string{{"SADD", "a", "1"}}, cmd: []string{"SUNIONSTORE", "d", "a", "nokey"},
		events: []string{"keymiss nokey", "new d", "sunionstore d"}},
}

// pendingNotifyGroups are the command groups whose write commands are being
// (re)written elsewhere and announce their own events when they land: their
// commands may miss from writeEvents for now. Every other write command must
// be listed there.
var pendingNotifyGroups = map[string]string{
	"list":       "lists are being rewritten; the list work adds their events (and entries here)",
	"sorted-set": "sorted sets are landing; their work adds their events (and entries here)",
	"sortedset":  "the same group, should its family be named so",
}

const notifyLib = "#!lua name=notifylib\nredis.register_function('nf', function() return 1 end)"

// TestNotifyEveryWriteCommand runs the sample invocation of every write command
// against a live server and compares the published events with writeEvents.
// migrateTarget is the address of the server MIGRATE's sample moves its key to.
var migrateTarget string

func TestNotifyEveryWriteCommand(t *testing.T) {
	migrateTarget = hotkvtest.Start(t).Addr
	srv := hotkvtest.Start(t, hotkvtest.WithFakeClock(captureMs))
	c := hotkvtest.Dial(t, srv.Addr)
	sub := hotkvtest.Dial(t, srv.Addr)
	sub.Do("PSUBSCRIBE", "__keyevent@*__:*")
	if r := c.Do("CONFIG", "SET", "notify-keyspace-events", "EAnocm"); r != "+OK\r\n" {
		t.Fatal(r)
	}

	var names, missing []string
	for _, s := range command.NewTable().All() {
		specs := []*command.Spec{s}
		if len(s.Subs) > 0 {
			specs = s.Subs
		}
		for _, sp := range specs {
			if sp.Flags&command.Write == 0 {
				continue
			}
			if _, ok := writeEvents[sp.FullName()]; ok {
				names = append(names, sp.FullName())
			} else if _, ok := pendingNotifyGroups[sp.Group]; !ok {
				missing = append(missing, sp.FullName())
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Errorf("write commands without keyspace event expectations (add them to writeEvents): %v", missing)
	}
	sort.Strings(names)
	for _, name := range names {
		tc := writeEvents[name]
		c.Do("FLUSHALL")
		c.Do("FUNCTION", "FLUSH")
		for _, s := range tc.setup {
			c.Do(s...)
		}
		drainEvents(t, sub)
		args := tc.cmd
		if tc.prep != nil {
			args = tc.prep(c)
			drainEvents(t, sub)
		}
		if r := c.Do(args...); strings.HasPrefix(r, "-") {
			t.Errorf("%s: sample %q failed: %s", name, args, r)
			continue
		}
		got := drainEvents(t, sub)
		if strings.Join(got, ", ") != strings.Join(tc.events, ", ") {
			t.Errorf("%s: %q published %q, want %q", name, args, got, tc.events)
		}
	}
}

// drainEvents returns the events published so far to sub (a PSUBSCRIBE'd RESP2
// connection): its PING reply comes after them.
func drainEvents(t *testing.T, sub *hotkvtest.Conn) []string {
	t.Helper()
	sub.Write(hotkvtest.EncodeCommand("PING"))
	var out []string
	for {
		r, err := sub.ReadReply()
		if err != nil {
			t.Fatal(err)
		}
		parts := bulkStrings(r)
		if len(parts) == 2 && parts[0] == "pong" {
			return out
		}
		if len(parts) != 4 || parts[0] != "pmessage" {
			t.Fatalf("unexpected message %q", r)
		}
		// __keyevent@<db>__:<event>, payload key
		ch := strings.TrimPrefix(parts[2], "__keyevent@")
		db, ev, _ := strings.Cut(ch, "__:")
		if db == "0" {
			out = append(out, ev+" "+parts[3])
		} else {
			out = append(out, db+":"+ev+" "+parts[3])
		}
	}
}

// bulkStrings splits a RESP array of bulk strings into its elements.
func bulkStrings(r string) []string {
	var out []string
	for {
		i := strings.Index(r, "$")
		if i < 0 {
			return out
		}
		r = r[i+1:]
		j := strings.Index(r, "\r\n")
		n, err := strconv.Atoi(r[:j])
		if err != nil || n < 0 {
			out = append(out, "")
			r = r[j+2:]
			continue
		}
		out = append(out, r[j+2:j+2+n])
		r = r[j+2+n+2:]
	}
}

// bulkPayload returns the content of a bulk string reply.
func bulkPayload(r string) string {
	j := strings.Index(r, "\r\n")
	n, _ := strconv.Atoi(r[1:j])
	return r[j+2 : j+2+n]
}
