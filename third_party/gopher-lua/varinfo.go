package lua

// HotKV patch: the runtime type errors of PUC Lua 5.1 (ldebug.c's
// luaG_typeerror and getobjname), which Redis scripts show their users:
// "attempt to call field 'execute' (a nil value)", "attempt to index local
// 't' (a number value)", "attempt to call a nil value" when the value has no
// name. gopher-lua said "attempt to call a non-function object" and
// "attempt to index a non-table object(nil) with key 'x'".

// typeError is luaG_typeerror's message for op ("call", "index") on v,
// which the running Lua function holds in register reg (-1: not a register,
// so no name).
func (ls *LState) typeError(v LValue, op string, reg int) string {
	if kind, name := ls.objName(reg); kind != "" {
		return "attempt to " + op + " " + kind + " '" + name + "' (a " + v.Type().String() + " value)"
	}
	return "attempt to " + op + " a " + v.Type().String() + " value"
}

// objName is getobjname: how the current instruction's function came to hold
// register reg ("local", "global", "field", "upvalue", "method") and the
// name, or "" when it cannot tell.
func (ls *LState) objName(reg int) (kind, name string) {
	cf := ls.currentFrame
	if reg < 0 || cf == nil || cf.Fn == nil || cf.Fn.IsG || cf.Pc <= 0 {
		return "", ""
	}
	return objNameAt(cf.Fn, cf.Pc-1, reg, 0)
}

func objNameAt(fn *LFunction, pc, reg, depth int) (string, string) {
	p := fn.Proto
	if n, ok := fn.LocalName(reg+1, pc+1); ok {
		return "local", n
	}
	setpc := findSetReg(p, pc, reg)
	if setpc < 0 || depth > 8 {
		return "", ""
	}
	i := p.Code[setpc]
	switch opGetOpCode(i) {
	case OP_GETGLOBAL:
		return "global", constName(p, opGetArgBx(i))
	case OP_MOVE, OP_MOVEN:
		if b := opGetArgB(i); b < opGetArgA(i) {
			return objNameAt(fn, setpc, b, depth+1)
		}
	case OP_GETTABLE, OP_GETTABLEKS:
		return "field", rkName(p, opGetArgC(i))
	case OP_GETUPVAL:
		if b := opGetArgB(i); b < len(p.DbgUpvalues) {
			return "upvalue", p.DbgUpvalues[b]
		}
		return "upvalue", "?"
	case OP_SELF:
		return "method", rkName(p, opGetArgC(i))
	}
	return "", ""
}

func constName(p *FunctionProto, k int) string {
	if k >= 0 && k < len(p.Constants) {
		if s, ok := p.Constants[k].(LString); ok {
			return string(s)
		}
	}
	return "?"
}

// rkName is kname: a constant string key's text, "?" otherwise.
func rkName(p *FunctionProto, c int) string {
	if opIsK(c) {
		return constName(p, opIndexK(c))
	}
	return "?"
}

// findSetReg is Lua 5.2's findsetreg (5.1's symbexec for this purpose): the
// last instruction before lastpc that set register reg, -1 if none or if a
// jump leads past it.
func findSetReg(p *FunctionProto, lastpc, reg int) int {
	setreg, jmptarget := -1, 0
	for pc := 0; pc < lastpc && pc < len(p.Code); pc++ {
		i := p.Code[pc]
		op, a := opGetOpCode(i), opGetArgA(i)
		sets := false
		switch op {
		case OP_LOADNIL:
			sets = a <= reg && reg <= opGetArgB(i)
		case OP_TFORLOOP:
			sets = reg >= a+2
		case OP_CALL, OP_TAILCALL:
			sets = reg >= a
		case OP_JMP:
			dest := pc + 1 + opGetArgSbx(i)
			if pc < dest && dest <= lastpc && dest > jmptarget {
				jmptarget = dest
			}
		case OP_SELF:
			sets = reg == a || reg == a+1
		case OP_VARARG:
			sets = reg >= a
		case OP_MOVE, OP_MOVEN, OP_LOADK, OP_LOADBOOL, OP_GETUPVAL, OP_GETGLOBAL,
			OP_GETTABLE, OP_GETTABLEKS, OP_NEWTABLE, OP_ADD, OP_SUB, OP_MUL, OP_DIV,
			OP_MOD, OP_POW, OP_UNM, OP_NOT, OP_LEN, OP_CONCAT, OP_TESTSET, OP_CLOSURE,
			OP_FORLOOP, OP_FORPREP:
			sets = reg == a
		}
		if sets {
			if pc < jmptarget {
				setreg = -1
			} else {
				setreg = pc
			}
		}
	}
	return setreg
}

// indexedReg is the register the current instruction indexes (GETTABLE,
// GETTABLEKS and SELF read R(B); SETTABLE and SETTABLEKS write R(A)), or -1.
func (ls *LState) indexedReg(obj LValue) int {
	cf := ls.currentFrame
	if cf == nil || cf.Fn == nil || cf.Fn.IsG || cf.Pc <= 0 || cf.Pc > len(cf.Fn.Proto.Code) {
		return -1
	}
	i := cf.Fn.Proto.Code[cf.Pc-1]
	reg := -1
	switch opGetOpCode(i) {
	case OP_GETTABLE, OP_GETTABLEKS, OP_SELF:
		reg = opGetArgB(i)
	case OP_SETTABLE, OP_SETTABLEKS:
		reg = opGetArgA(i)
	}
	if reg < 0 || ls.reg.Get(cf.LocalBase+reg) != obj {
		return -1
	}
	return reg
}

// indexError is luaG_typeerror(t, "index") for a failed lookup that began at
// obj and reached cur (a value with no __index): named when cur is the
// value the instruction indexes, in a register.
func (ls *LState) indexError(obj, cur LValue) string {
	reg := -1
	if cur == obj {
		reg = ls.indexedReg(obj)
	}
	return ls.typeError(cur, "index", reg)
}
