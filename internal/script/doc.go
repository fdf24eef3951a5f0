// Package script runs Redis's Lua scripts (EVAL, FUNCTION) on gopher-lua: the
// sandbox, the redis.* API, and the conversions between Lua values and RESP.
package script

import _ "github.com/yuin/gopher-lua" // the interpreter (docs/decisions)
