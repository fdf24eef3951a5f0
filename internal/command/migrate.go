package command

import (
	"strconv"

	"github.com/hotkv/hotkv/internal/rdb"
	"github.com/hotkv/hotkv/internal/resp"
)

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
// [AUTH password | AUTH2 username password] [KEYS key [key ...]]
// (cluster.c migrateCommand): the keys go to the target as RESTORE commands
// with their DUMP payloads, over a connection the server keeps for the next
// MIGRATE to the same address (Server.Migrate does the I/O, blocking every
// client as Redis's does); each key the target restored is deleted here
// unless COPY, and the command propagates as DEL of those keys.

// Migration is one MIGRATE's transfer.
type Migration struct {
	Host, Port string
	DB         int64
	TimeoutMs  int64
	// Username and Password: AUTH2 (both) or AUTH (Password only); no AUTH
	// when Password is nil
	Username, Password []byte
	// Cmds are the RESTORE commands, RESP-encoded, one per key
	Cmds []byte
	N    int // how many RESTORE commands Cmds holds
}

// MigrateResult is what the target answered.
type MigrateResult struct {
	// OK says, per RESTORE, whether the target acknowledged it (the key is
	// then deleted here unless COPY); the others failed or got no reply.
	OK []bool
	// Err is the reply when not every key went: "ERR Target instance
	// replied with error: ..." (the first error) or an IOERR; "" on success.
	Err string
}

func migrateCmd(c *Ctx) {
	copyKeys, replace := false, false
	var user, pass []byte
	first, num := 3, 1
	argv := c.Argv
	for j := 6; j < len(argv); j++ {
		more := len(argv) - 1 - j
		switch a := argv[j]; {
		case eqFold(a, "copy"):
			copyKeys = true
		case eqFold(a, "replace"):
			replace = true
		case eqFold(a, "auth"):
			if more < 1 {
				c.Err(ErrSyntax)
				return
			}
			j++
			pass = argv[j]
			c.Redact(j)
		case eqFold(a, "auth2"):
			if more < 2 {
				c.Err(ErrSyntax)
				return
			}
			user, pass = argv[j+1], argv[j+2]
			c.Redact(j + 1)
			c.Redact(j + 2)
			j += 2
		case eqFold(a, "keys"):
			if len(argv[3]) != 0 {
				c.Error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
				return
			}
			first, num = j+1, len(argv)-j-1
			j = len(argv)
		default:
			c.Err(ErrSyntax)
			return
		}
	}
	timeout, ok := resp.ParseInt(argv[5])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	db, ok := resp.ParseInt(argv[4])
	if !ok {
		c.Err(ErrNotInt)
		return
	}
	if timeout <= 0 {
		timeout = 1000
	}
	// the keys that exist (an expired one does not), in order
	var keys [][]byte
	var enc resp.Writer // the RESTORE commands
	compress := c.Srv.Persistence().RDBCompression()
	for _, k := range argv[first : first+num] {
		e := c.DB.LookupRead(k, c.Client.NoTouch)
		if e == nil {
			continue
		}
		ttl := int64(0)
		if at := c.DB.ExpireAt(e); at > 0 {
			ttl = max(at-c.Now, 1)
		}
		n := 4
		if replace {
			n = 5
		}
		enc.ArrayLen(n)
		enc.BulkString("RESTORE")
		enc.Bulk(k)
		enc.BulkString(strconv.FormatInt(ttl, 10))
		enc.Bulk(rdb.Dump(e, compress))
		if replace {
			enc.BulkString("REPLACE")
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		c.W.SimpleString("NOKEY")
		c.PreventPropagation()
		return
	}
	res := c.Srv.Migrate(&Migration{Host: string(argv[1]), Port: string(argv[2]), DB: db, TimeoutMs: timeout,
		Username: user, Password: pass, Cmds: enc.Buf, N: len(keys)})
	var deleted [][]byte
	if !copyKeys {
		for i, k := range keys {
			if i >= len(res.OK) || !res.OK[i] {
				continue
			}
			c.DB.Delete(k) // signals the change (WATCH, tracking)
			c.Notify('g', "del", k)
			c.Dirty++
			deleted = append(deleted, k)
		}
	}
	if len(deleted) > 0 {
		c.PropagateAs(append([][]byte{wDel}, deleted...)...)
	} else {
		c.PreventPropagation()
	}
	if res.Err != "" {
		c.Error(res.Err)
		return
	}
	c.W.SimpleString("OK")
}

// migrateKeys is migrateGetKeys: the key argument, or what follows KEYS
// (options before it skipped with their arguments); none for KEYS after a
// key that is not empty.
func migrateKeys(argv [][]byte) []int {
	first, num := 3, 1
	if len(argv) > 6 {
	scan:
		for i := 6; i < len(argv); i++ {
			switch a := argv[i]; {
			case eqFold(a, "keys"):
				if len(argv[3]) > 0 {
					num = 0 // a syntax error, which MIGRATE itself reports
				} else {
					first, num = i+1, len(argv)-i-1
				}
				break scan
			case eqFold(a, "auth"):
				i++
			case eqFold(a, "auth2"):
				i += 2
			}
		}
	}
	out := make([]int, 0, num)
	for i := first; i < first+num; i++ {
		out = append(out, i)
	}
	return out
}

// migrateKeyFlags: every key migrateGetKeys finds is RW access delete.
func migrateKeyFlags([][]byte) []string { return []string{"RW", "access", "delete"} }
