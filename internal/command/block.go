package command

import (
	"math"
	"math/big"

	"github.com/hotkv/hotkv/internal/resp"
)

// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP; later the sorted
// set and stream ones) first try to serve their client at once, exactly as their
// non-blocking forms do. Only when none of their keys can serve it do they park
// it, through one hook: Ctx.Block, which the server implements (Server.Block).
//
// A client that may not block (MayBlock false: a Lua script's client, a command
// run by EXEC) never reaches the hook: the command answers at once as Redis does
// for CLIENT_DENY_BLOCKING, as if the timeout had passed.

// MayBlock reports whether the client may be parked by a blocking command:
// not a script's client, not a command run by EXEC, not the last run of a
// command whose timeout passed (NoBlock).
func (c *Ctx) MayBlock() bool { return !c.Client.Script && !c.Client.DenyBlocking && !c.NoBlock }

// maxInt64LD is LLONG_MAX as the long double Redis compares with.
var maxInt64LD = new(big.Float).SetInt64(math.MaxInt64)

// parseTimeout is getTimeoutFromObjectOrReply with UNIT_SECONDS: arg is a
// number of seconds (a long double, as strtold reads it), turned into
// milliseconds by x*1000 in long double arithmetic rounded up (ceill), and into
// an absolute deadline from the command's frozen now. 0 means no timeout. On
// error it replies and returns false.
func parseTimeout(c *Ctx, arg []byte) (int64, bool) {
	x, ok := resp.ParseLongDouble(arg)
	if !ok {
		c.Error("ERR timeout is not a float or out of range")
		return 0, false
	}
	var ms int64
	switch {
	case x.IsInf():
		if x.Float64() > 0 {
			c.Error("ERR timeout is out of range")
			return 0, false
		}
		ms = math.MinInt64 // (long long)ceill(-inf) on x86-64
	default:
		f := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven)
		f.Mul(x.Big(), big.NewFloat(1000))
		if f.Cmp(maxInt64LD) > 0 {
			c.Error("ERR timeout is out of range")
			return 0, false
		}
		i, acc := f.Int(nil) // truncated towards zero
		switch {
		case !i.IsInt64():
			ms = math.MinInt64 // below LLONG_MIN: the x87 gives the indefinite integer
		default:
			ms = i.Int64()
			if acc == big.Below && f.Sign() > 0 {
				ms++ // ceil of a positive fraction; a negative one truncates up already
			}
		}
	}
	if ms < 0 {
		c.Error("ERR timeout is negative")
		return 0, false
	}
	if ms > 0 {
		if ms > math.MaxInt64-c.Now {
			c.Error("ERR timeout is out of range")
			return 0, false
		}
		ms += c.Now
	}
	return ms, true
}
