package script

import (
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/hotkv/hotkv/internal/resp"
)

var (
	posInf = math.Inf(1)
	negInf = math.Inf(-1)
)

// registerRedisAPI builds the redis table (script_lua.c's luaRegisterRedisAPI
// and eval.c's debugger stubs).
func registerRedisAPI(vm *VM, L *lua.LState) {
	r := L.NewTable()
	fn := func(name string, f lua.LGFunction) { r.RawSetString(name, L.NewFunction(f)) }
	fn("call", func(L *lua.LState) int { return vm.redisCall(L, true) })
	fn("pcall", func(L *lua.LState) int { return vm.redisCall(L, false) })
	fn("log", vm.redisLog)
	for name, lvl := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3} {
		r.RawSetString(name, lua.LNumber(lvl))
	}
	r.RawSetString("REDIS_VERSION", lua.LString(vm.version))
	r.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNum(vm.version)))
	fn("setresp", vm.redisSetResp)
	fn("sha1hex", func(L *lua.LState) int {
		if L.GetTop() != 1 {
			L.Error(errorTable(L, "wrong number of arguments"), 0)
		}
		L.Push(lua.LString(SHA1Hex(L.ToString(1))))
		return 1
	})
	fn("error_reply", func(L *lua.LState) int {
		if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
			L.Push(errorTable(L, "wrong number or type of arguments"))
			return 1
		}
		msg := L.ToString(1)
		if !strings.HasPrefix(msg, "-") {
			msg = "-" + msg
		}
		L.Push(errorTable(L, msg))
		return 1
	})
	fn("status_reply", func(L *lua.LState) int {
		if L.GetTop() != 1 || L.Get(1).Type() != lua.LTString {
			L.Push(errorTable(L, "wrong number or type of arguments"))
			return 1
		}
		t := L.NewTable()
		t.RawSetString("ok", L.Get(1))
		L.Push(t)
		return 1
	})
	fn("set_repl", vm.redisSetRepl)
	for name, v := range map[string]int{"REPL_NONE": ReplNone, "REPL_AOF": ReplAOF, "REPL_SLAVE": ReplSlave, "REPL_REPLICA": ReplSlave, "REPL_ALL": ReplAll} {
		r.RawSetString(name, lua.LNumber(v))
	}
	fn("replicate_commands", func(L *lua.LState) int { L.Push(lua.LTrue); return 1 })
	fn("breakpoint", func(L *lua.LState) int { L.Push(lua.LFalse); return 1 })
	fn("debug", func(L *lua.LState) int { return 0 })
	fn("acl_check_cmd", vm.redisACLCheck)
	L.G.Global.RawSetString("redis", r)
}

// versionNum is REDIS_VERSION_NUM: 0x00MMmmpp.
func versionNum(v string) int {
	n := 0
	for _, p := range strings.SplitN(v, ".", 3) {
		x, _ := strconv.Atoi(p)
		n = n<<8 | x
	}
	return n
}

// scriptArgs converts redis.call's arguments (luaArgsToRedisArgv): strings as
// they are, numbers as Redis 8's fpconv_dtoa writes them (appendDtoa);
// anything else is an error. The argv and its
// bytes are the VM's buffers, reused by the next call: the host must not keep
// them past the call (as a command's argv, which aliases the read buffer).
func (vm *VM) scriptArgs(L *lua.LState) ([][]byte, string) {
	n := L.GetTop()
	if n == 0 {
		return nil, "Please specify at least one argument for this redis lib call"
	}
	buf := vm.argBytes[:0]
	ends := vm.argEnds[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			buf = append(buf, v...)
		case lua.LNumber:
			buf = appendDtoa(buf, float64(v))
		default:
			return nil, "Lua redis lib command arguments must be strings or integers"
		}
		ends = append(ends, len(buf))
	}
	argv := vm.argv0[:0]
	start := 0
	for _, end := range ends {
		argv = append(argv, buf[start:end:end])
		start = end
	}
	vm.argBytes, vm.argEnds, vm.argv0 = buf, ends, argv
	return argv, ""
}

// appendDtoa appends a script's number argument as Redis 8 writes it
// (luaArgsToRedisArgv): an integer within +-2^62 in full (double2ll, then
// ll2string; -0 too, as "0"), anything else as fpconv_dtoa writes a double.
func appendDtoa(dst []byte, f float64) []byte {
	if f >= -(1<<62) && f <= 1<<62 && f == math.Trunc(f) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return resp.AppendFpconv(dst, f)
}

func (vm *VM) redisCall(L *lua.LState, raise bool) int {
	run := vm.run
	if run == nil {
		L.Error(errorTable(L, "redis.call/pcall can only be called inside a script invocation"), 0)
	}
	argv, errText := vm.scriptArgs(L)
	L.SetTop(0)
	if errText != "" {
		t := errorTable(L, errText)
		if raise {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	reply, refusal := run.Host.Call(run, argv)
	if refusal != "" {
		t := errorTable(L, refusal)
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		if raise {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	v, _ := respToLua(L, reply)
	if raise && len(reply) > 0 && reply[0] == '-' {
		L.Error(v, 0)
	}
	L.Push(v)
	return 1
}

func (vm *VM) redisLog(L *lua.LState) int {
	argc := L.GetTop()
	if argc < 2 {
		L.Error(errorTable(L, "redis.log() requires two arguments or more."), 0)
	}
	if _, ok := L.Get(1).(lua.LNumber); !ok {
		if s, sok := L.Get(1).(lua.LString); !sok || !isNumeric(string(s)) {
			L.Error(errorTable(L, "First argument must be a number (log level)."), 0)
		}
	}
	level := int(lua.LVAsNumber(L.Get(1)))
	if level < 0 || level > 3 {
		L.Error(errorTable(L, "Invalid log level."), 0)
	}
	var sb strings.Builder
	for i := 2; i <= argc; i++ {
		v := L.Get(i)
		if v.Type() != lua.LTString && v.Type() != lua.LTNumber {
			continue
		}
		if i != 2 {
			sb.WriteByte(' ')
		}
		sb.WriteString(lua.LVAsString(v))
	}
	if vm.run != nil {
		vm.run.Host.Log(level, sb.String())
	} else if vm.logf != nil {
		vm.logf(level, sb.String())
	}
	return 0
}

func isNumeric(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

func (vm *VM) redisSetResp(L *lua.LState) int {
	if vm.run == nil {
		L.Error(errorTable(L, "redis.setresp can only be called inside a script invocation"), 0)
	}
	if L.GetTop() != 1 {
		L.Error(errorTable(L, "redis.setresp() requires one argument."), 0)
	}
	n := int(lua.LVAsNumber(L.Get(1)))
	if n != 2 && n != 3 {
		L.Error(errorTable(L, "RESP version must be 2 or 3."), 0)
	}
	vm.run.Resp = n
	return 0
}

func (vm *VM) redisSetRepl(L *lua.LState) int {
	if vm.run == nil {
		L.Error(errorTable(L, "redis.set_repl can only be called inside a script invocation"), 0)
	}
	if L.GetTop() != 1 {
		L.Error(errorTable(L, "redis.set_repl() requires two arguments."), 0)
	}
	flags := int(lua.LVAsNumber(L.Get(1)))
	if flags&^ReplAll != 0 {
		L.Error(errorTable(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE."), 0)
	}
	vm.run.Repl = flags
	return 0
}

func (vm *VM) redisACLCheck(L *lua.LState) int {
	if vm.run == nil {
		L.Error(errorTable(L, "redis.acl_check_cmd can only be called inside a script invocation"), 0)
	}
	argv, errText := vm.scriptArgs(L)
	if errText != "" {
		L.Error(errorTable(L, errText), 0)
	}
	allowed, errText := false, "Invalid command passed to redis.acl_check_cmd()"
	if vm.aclCheck != nil {
		allowed, errText = vm.aclCheck(argv)
	}
	if errText != "" {
		L.Error(errorTable(L, errText), 0)
	}
	L.Push(lua.LBool(allowed))
	return 1
}
