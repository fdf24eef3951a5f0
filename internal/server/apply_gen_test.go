package server

import (
	"math/rand/v2"
	"strconv"
)

// Random commands of every command group, for the determinism test
// (apply_test.go). Keys, members and values come from small sets so that
// commands meet each other's keys (and wrong types); numbers stay small so that
// collections stay small and the test fast. Each generator returns one argv.

type gen struct {
	r *rand.Rand
}

func (g gen) n(k int) int             { return g.r.IntN(k) }
func (g gen) pick(s ...string) string { return s[g.r.IntN(len(s))] }
func (g gen) num(lo, hi int) string   { return strconv.Itoa(lo + g.r.IntN(hi-lo+1)) }
func (g gen) key(prefix string) string {
	return prefix + strconv.Itoa(g.r.IntN(6))
}
func (g gen) member() string { return "m" + strconv.Itoa(g.r.IntN(12)) }
func (g gen) value() string {
	switch g.r.IntN(5) {
	case 0:
		return strconv.Itoa(g.r.IntN(2000) - 1000)
	case 1:
		return ""
	case 2:
		return strconv.FormatFloat(g.r.Float64()*100, 'f', 3, 64)
	default:
		return "v" + strconv.Itoa(g.r.IntN(50))
	}
}
func (g gen) ttl() []string {
	switch g.r.IntN(4) {
	case 0:
		return []string{"PX", g.num(1, 3000)}
	case 1:
		return []string{"EX", g.num(1, 5)}
	default:
		return nil
	}
}

// anyKey is a key of any group's prefix: commands of one group meet the
// others' keys (WRONGTYPE, TYPE, RENAME across types).
func (g gen) anyKey() string {
	return g.key(g.pick("s:", "l:", "h:", "S:", "z:", "x:", "g:", "p:", "b:"))
}

var groupGens = map[string]func(g gen) []string{
	"string": func(g gen) []string {
		k := g.key("s:")
		switch g.n(16) {
		case 0:
			return append([]string{"SET", k, g.value()}, g.ttl()...)
		case 1:
			return []string{"SET", k, g.value(), g.pick("NX", "XX", "GET", "KEEPTTL")}
		case 2:
			return []string{"GET", k}
		case 3:
			return []string{"INCRBY", k, g.num(-5, 5)}
		case 4:
			return []string{"APPEND", k, g.value()}
		case 5:
			return []string{"GETRANGE", k, g.num(-5, 5), g.num(-5, 10)}
		case 6:
			return []string{"SETRANGE", k, g.num(0, 20), g.value()}
		case 7:
			return []string{"MSET", k, g.value(), g.key("s:"), g.value()}
		case 8:
			return []string{"MGET", k, g.key("s:"), g.anyKey()}
		case 9:
			return []string{"INCRBYFLOAT", k, g.pick("1.5", "-0.25", "3")}
		case 10:
			return []string{"GETDEL", k}
		case 11:
			return append([]string{"GETEX", k}, g.ttl()...)
		case 12:
			return []string{"DELEX", k, g.pick("IFEQ", "IFNE"), g.value()}
		case 13:
			return []string{"SET", k, g.value(), g.pick("IFEQ", "IFNE"), g.value()}
		case 14:
			return []string{"STRLEN", k}
		default:
			return []string{"LCS", k, g.key("s:")}
		}
	},
	"generic": func(g gen) []string {
		k := g.anyKey()
		switch g.n(16) {
		case 0:
			return []string{"DEL", k, g.anyKey()}
		case 1:
			return []string{"EXISTS", k, g.anyKey()}
		case 2:
			return []string{"PEXPIRE", k, g.num(1, 4000), g.pick("NX", "XX", "GT", "LT")}
		case 3:
			return []string{"EXPIRE", k, g.num(1, 5)}
		case 4:
			return []string{"PTTL", k}
		case 5:
			return []string{"PERSIST", k}
		case 6:
			return []string{"RENAME", k, g.anyKey()}
		case 7:
			return []string{"RENAMENX", k, g.anyKey()}
		case 8:
			return []string{"COPY", k, g.anyKey(), "REPLACE"}
		case 9:
			return []string{"TYPE", k}
		case 10:
			return []string{"RANDOMKEY"}
		case 11:
			return []string{"SCAN", g.num(0, 3), "COUNT", g.num(1, 10)}
		case 12:
			return []string{"KEYS", g.pick("*", "s:*", "?:1", "[lh]:*")}
		case 13:
			return []string{"SORT", g.key("l:"), "ALPHA", "LIMIT", "0", g.num(1, 5)}
		case 14:
			return []string{"UNLINK", k}
		default:
			return []string{"SET", g.key("s:"), g.value(), "PX", g.num(1, 2000)}
		}
	},
	"list": func(g gen) []string {
		k := g.key("l:")
		switch g.n(14) {
		case 0, 1:
			return []string{g.pick("LPUSH", "RPUSH"), k, g.value(), g.member()}
		case 2:
			return []string{g.pick("LPOP", "RPOP"), k, g.num(1, 3)}
		case 3:
			return []string{"LRANGE", k, g.num(-5, 3), g.num(-3, 10)}
		case 4:
			return []string{"LINSERT", k, g.pick("BEFORE", "AFTER"), g.member(), g.value()}
		case 5:
			return []string{"LREM", k, g.num(-2, 2), g.member()}
		case 6:
			return []string{"LSET", k, g.num(-3, 3), g.value()}
		case 7:
			return []string{"LTRIM", k, g.num(0, 2), g.num(-3, 8)}
		case 8:
			return []string{"LMOVE", k, g.key("l:"), g.pick("LEFT", "RIGHT"), g.pick("LEFT", "RIGHT")}
		case 9:
			return []string{"BLPOP", k, g.key("l:"), "0.01"}
		case 10:
			return []string{"LPOS", k, g.member(), "RANK", g.pick("1", "-1", "2")}
		case 11:
			return []string{"LMPOP", "2", k, g.key("l:"), g.pick("LEFT", "RIGHT"), "COUNT", g.num(1, 3)}
		case 12:
			return []string{"LINDEX", k, g.num(-3, 3)}
		default:
			return []string{"BLMOVE", k, g.key("l:"), "LEFT", "RIGHT", "0.01"}
		}
	},
	"hash": func(g gen) []string {
		k := g.key("h:")
		switch g.n(15) {
		case 0, 1:
			return []string{"HSET", k, g.member(), g.value(), g.member(), g.value()}
		case 2:
			return []string{"HGET", k, g.member()}
		case 3:
			return []string{"HDEL", k, g.member()}
		case 4:
			return []string{"HGETALL", k}
		case 5:
			return []string{"HINCRBY", k, g.member(), g.num(-3, 3)}
		case 6:
			return []string{"HSETNX", k, g.member(), g.value()}
		case 7:
			return []string{"HRANDFIELD", k, g.num(-3, 3), "WITHVALUES"}
		case 8:
			return []string{"HPEXPIRE", k, g.num(1, 3000), "FIELDS", "2", g.member(), g.member()}
		case 9:
			return []string{"HPTTL", k, "FIELDS", "1", g.member()}
		case 10:
			return []string{"HPERSIST", k, "FIELDS", "1", g.member()}
		case 11:
			return []string{"HGETDEL", k, "FIELDS", "1", g.member()}
		case 12:
			return []string{"HSETEX", k, "PX", g.num(1, 3000), "FIELDS", "1", g.member(), g.value()}
		case 13:
			return []string{"HSCAN", k, "0", "COUNT", "20"}
		default:
			return []string{"HMGET", k, g.member(), g.member()}
		}
	},
	"set": func(g gen) []string {
		k := g.key("S:")
		switch g.n(14) {
		case 0, 1:
			return []string{"SADD", k, g.member(), g.member(), g.num(0, 40)}
		case 2:
			return []string{"SREM", k, g.member(), g.num(0, 40)}
		case 3:
			return []string{"SMEMBERS", k}
		case 4:
			return []string{"SPOP", k, g.num(1, 3)}
		case 5:
			return []string{"SRANDMEMBER", k, g.num(-4, 4)}
		case 6:
			return []string{"SMOVE", k, g.key("S:"), g.member()}
		case 7:
			return []string{g.pick("SINTER", "SUNION", "SDIFF"), k, g.key("S:")}
		case 8:
			return []string{g.pick("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), g.key("S:"), k, g.key("S:")}
		case 9:
			return []string{"SISMEMBER", k, g.member()}
		case 10:
			return []string{"SINTERCARD", "2", k, g.key("S:"), "LIMIT", g.num(0, 3)}
		case 11:
			return []string{"SSCAN", k, "0", "COUNT", "5"}
		case 12:
			return []string{"SCARD", k}
		default:
			return []string{"SPOP", k}
		}
	},
	"sorted-set": func(g gen) []string {
		k := g.key("z:")
		switch g.n(15) {
		case 0, 1:
			return []string{"ZADD", k, g.num(-5, 5), g.member(), g.pick("1.5", "2", "-inf", "7"), g.member()}
		case 2:
			return []string{"ZADD", k, g.pick("NX", "XX", "GT", "LT"), "INCR", g.num(-3, 3), g.member()}
		case 3:
			return []string{"ZREM", k, g.member()}
		case 4:
			return []string{"ZRANGE", k, g.num(-5, 2), g.num(-2, 8), "WITHSCORES"}
		case 5:
			return []string{"ZRANGEBYSCORE", k, g.pick("-inf", "0", "(1"), g.pick("+inf", "5", "(3"), "LIMIT", "0", g.num(1, 4)}
		case 6:
			return []string{"ZINCRBY", k, g.num(-3, 3), g.member()}
		case 7:
			return []string{g.pick("ZPOPMIN", "ZPOPMAX"), k, g.num(1, 3)}
		case 8:
			return []string{"ZRANDMEMBER", k, g.num(-3, 3), "WITHSCORES"}
		case 9:
			return []string{g.pick("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"), g.key("z:"), "2", k, g.key("z:")}
		case 10:
			return []string{"ZRANK", k, g.member(), "WITHSCORE"}
		case 11:
			return []string{"ZREMRANGEBYRANK", k, g.num(0, 2), g.num(0, 4)}
		case 12:
			return []string{"ZRANGESTORE", g.key("z:"), k, "0", g.num(0, 5)}
		case 13:
			return []string{"BZPOPMIN", k, g.key("z:"), "0.01"}
		default:
			return []string{"ZMPOP", "2", k, g.key("z:"), g.pick("MIN", "MAX"), "COUNT", g.num(1, 2)}
		}
	},
	"stream": func(g gen) []string {
		k := g.key("x:")
		switch g.n(17) {
		case 0, 1, 2:
			return []string{"XADD", k, g.pick("*", "*", "MAXLEN", "NOMKSTREAM"), "f", g.value()}
		case 14:
			if g.n(2) == 0 {
				return []string{"XADD", k, "IDMPAUTO", "p" + g.num(0, 1), "MAXLEN", "~", g.num(0, 5), "*", "f", g.value()}
			}
			return []string{"XADD", k, "IDMP", "p" + g.num(0, 1), "i" + g.num(0, 4), "*", "f", g.value()}
		case 15:
			return []string{"XCFGSET", k, "IDMP-MAXSIZE", g.num(1, 3)}
		case 16:
			return []string{"XTRIM", k, g.pick("MAXLEN", "MINID"), "~", g.pick("0", "1", "2-0"), "LIMIT", g.num(0, 3)}
		case 3:
			return []string{"XRANGE", k, "-", "+", "COUNT", g.num(1, 5)}
		case 4:
			return []string{"XLEN", k}
		case 5:
			return []string{"XDEL", k, "0-" + g.num(1, 3)}
		case 6:
			return []string{"XTRIM", k, "MAXLEN", g.num(0, 5)}
		case 7:
			return []string{"XGROUP", "CREATE", k, "g" + g.num(0, 1), g.pick("0", "$"), "MKSTREAM"}
		case 8:
			if g.n(3) == 0 {
				return []string{"XREADGROUP", "GROUP", "g" + g.num(0, 1), "c" + g.num(0, 2), "COUNT", g.num(1, 3), "CLAIM", g.num(0, 500), "STREAMS", k, ">"}
			}
			return []string{"XREADGROUP", "GROUP", "g" + g.num(0, 1), "c" + g.num(0, 2), "COUNT", g.num(1, 3), "STREAMS", k, ">"}
		case 9:
			return []string{"XACK", k, "g" + g.num(0, 1), "0-1"}
		case 10:
			return []string{"XPENDING", k, "g" + g.num(0, 1)}
		case 11:
			return []string{"XAUTOCLAIM", k, "g" + g.num(0, 1), "c" + g.num(0, 2), "0", "0-0", "COUNT", "2"}
		case 12:
			return []string{"XREAD", "COUNT", "2", "STREAMS", k, "0"}
		default:
			return []string{"XINFO", "STREAM", k}
		}
	},
	"geo": func(g gen) []string {
		k := g.key("g:")
		switch g.n(8) {
		case 0, 1, 2:
			return []string{"GEOADD", k, g.num(-179, 179) + ".5", g.num(-80, 80) + ".25", g.member()}
		case 3:
			return []string{"GEODIST", k, g.member(), g.member(), g.pick("m", "km")}
		case 4:
			return []string{"GEOPOS", k, g.member(), g.member()}
		case 5:
			return []string{"GEOSEARCH", k, "FROMLONLAT", "0", "0", "BYRADIUS", "20000", "km", "ASC", "COUNT", "3", "WITHCOORD"}
		case 6:
			return []string{"GEOHASH", k, g.member()}
		default:
			return []string{"GEOSEARCHSTORE", g.key("g:"), k, "FROMMEMBER", g.member(), "BYBOX", "40000", "40000", "km", "ASC", "STOREDIST"}
		}
	},
	"hyperloglog": func(g gen) []string {
		k := g.key("p:")
		switch g.n(4) {
		case 0, 1:
			return []string{"PFADD", k, g.member(), g.num(0, 80)}
		case 2:
			return []string{"PFCOUNT", k, g.key("p:")}
		default:
			return []string{"PFMERGE", g.key("p:"), k}
		}
	},
	"bitmap": func(g gen) []string {
		k := g.key("b:")
		switch g.n(8) {
		case 0, 1:
			return []string{"SETBIT", k, g.num(0, 200), g.num(0, 1)}
		case 2:
			return []string{"GETBIT", k, g.num(0, 200)}
		case 3:
			return []string{"BITCOUNT", k, g.num(0, 5), g.num(-3, 30), g.pick("BYTE", "BIT")}
		case 4:
			return []string{"BITOP", g.pick("AND", "OR", "XOR"), g.key("b:"), k, g.key("b:")}
		case 5:
			return []string{"BITPOS", k, g.num(0, 1)}
		case 6:
			return []string{"BITFIELD", k, "INCRBY", "u8", g.num(0, 100), g.num(-300, 300), "GET", "i5", g.num(0, 50)}
		default:
			return []string{"SETBIT", k, g.num(0, 5000), "1"}
		}
	},
	"scripting": func(g gen) []string {
		k := g.anyKey()
		switch g.n(5) {
		case 0:
			return []string{"EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])", "1", g.key("s:"), g.value()}
		case 1:
			return []string{"EVAL", "return redis.pcall('incr', KEYS[1])", "1", k}
		case 2:
			return []string{"EVAL", "return {redis.call('exists', KEYS[1]), math.random(100)}", "1", k}
		case 3:
			return []string{"EVAL", "#!lua flags=no-writes\nreturn redis.call('type', KEYS[1])", "1", k}
		default:
			return []string{"EVAL", "return redis.call('srandmember', KEYS[1])", "1", g.key("S:")}
		}
	},
}
