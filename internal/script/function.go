package script

import (
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/hotkv/hotkv/internal/resp"
)

// Redis functions (FUNCTION LOAD, FCALL): libraries of named Lua functions,
// loaded from code that starts with `#!lua name=<library>` and registers its
// functions with redis.register_function. As in Redis's function_lua.c, the
// library code runs against a load-time globals table that holds only a small
// redis table (register_function, log, the version); the callbacks it
// registers run later against the normal sandbox globals.

// Function is one registered function.
type Function struct {
	Name        string
	Description string // "" when none was given
	HasDesc     bool
	Flags       Flags
	Library     *Library
	fn          *lua.LFunction
}

// Library is one loaded library.
type Library struct {
	Name      string
	Code      string
	Functions []*Function // in registration order
}

// loadTimeoutMs bounds how long a library's code may run at FUNCTION LOAD.
const loadTimeoutMs = 500

type functions struct {
	libs    map[string]*Library  // by lower-case name
	funcs   map[string]*Function // by lower-case name
	env     *lua.LTable          // the functions' globals: a read-only view
	envMeta *lua.LTable          // its metatable; __index switches at load time
	globals *lua.LTable          // what env shows at run time (functionGlobals)
	loadAPI *lua.LTable          // the globals library code sees while it loads
	loading *Library             // the library being loaded, nil otherwise
}

func (vm *VM) initFunctions(L *lua.LState) {
	f := &vm.fn
	f.libs = map[string]*Library{}
	f.funcs = map[string]*Function{}
	// load-time redis table
	r := L.NewTable()
	r.RawSetString("register_function", L.NewFunction(vm.registerFunction))
	r.RawSetString("log", L.NewFunction(vm.redisLog))
	for name, lvl := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3} {
		r.RawSetString(name, lua.LNumber(lvl))
	}
	r.RawSetString("REDIS_VERSION", lua.LString(vm.version))
	r.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNum(vm.version)))
	missing := L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errMissingGlobal, L.ToString(2))
		return 0
	})
	rmt := L.NewTable()
	rmt.RawSetString("__index", missing)
	L.SetMetatable(r, rmt)
	api := L.NewTable()
	api.RawSetString("redis", vm.readonlyView(L, r, nil))
	amt := L.NewTable()
	amt.RawSetString("__index", missing)
	L.SetMetatable(api, amt)
	f.loadAPI = api
	// getmetatable on the view shows a protected stand-in, so only runLibrary
	// can switch its __index
	f.globals = vm.functionGlobals(L)
	f.env, f.envMeta = vm.readonlyViewMeta(L, f.globals, nil)
}

// functionGlobals is the functions' own globals: eval's, but with their own
// instances of the extra libraries, whose settings (cjson's) functions and
// scripts do not share, as Redis runs them in two Lua states.
func (vm *VM) functionGlobals(L *lua.LState) *lua.LTable {
	if vm.libs == nil {
		return vm.globals
	}
	fg := L.NewTable()
	vm.globals.ForEach(func(k, v lua.LValue) { fg.RawSet(k, v) })
	saved := L.G.Global
	L.G.Global = fg
	vm.libs(L)
	L.G.Global = saved
	vm.protectLibs(L, fg) // read-only, as eval's (sandbox.go)
	if mt, ok := L.GetMetatable(vm.globals).(*lua.LTable); ok {
		L.SetMetatable(fg, mt) // after the libraries: its __index raises on what they look for
	}
	return fg
}

// extraLibs are the libraries Redis adds to Lua's (vm.libs makes them).
var extraLibs = []string{"cjson", "cmsgpack", "bit", "struct"}

// ValidName reports whether name is a valid library or function name: letters,
// digits and underscores, at least one.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// libraryMeta parses the library code's shebang (functionExtractLibMetaData).
func libraryMeta(code string) (engine, name, errText string) {
	if !strings.HasPrefix(code, "#!") {
		return "", "", "ERR Missing library metadata"
	}
	line := code
	if nl := strings.IndexByte(code, '\n'); nl >= 0 {
		line = code[:nl]
	}
	// sdssplitargs: quotes are allowed (name="foo")
	raw, ok := resp.SplitArgs([]byte(line))
	if !ok || len(raw) == 0 {
		return "", "", "ERR Invalid library metadata"
	}
	parts := make([]string, len(raw))
	for i, p := range raw {
		parts[i] = string(p)
	}
	engine = strings.TrimPrefix(parts[0], "#!")
	seen := false
	for _, p := range parts[1:] {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k != "name" {
			return "", "", "ERR Invalid metadata value given: " + p
		}
		if seen {
			return "", "", "ERR Invalid metadata value, name argument was given multiple times"
		}
		name, seen = v, true
	}
	if !seen {
		return "", "", "ERR Library name was not given"
	}
	return engine, name, ""
}

// LoadLibrary is FUNCTION LOAD: it compiles and runs code, which must register
// at least one function, and installs the library (replacing one of the same
// name when replace is set). It returns the library name or the error text.
// Interrupt, when not nil, is polled as in a script run (timeouts, kills).
func (vm *VM) LoadLibrary(code string, replace bool, nowMs func() int64) (string, string) {
	engine, name, errText := libraryMeta(code)
	if errText != "" {
		return "", errText
	}
	if !strings.EqualFold(engine, "lua") {
		return "", "ERR Engine '" + engine + "' not found"
	}
	if !ValidName(name) {
		return "", "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"
	}
	f := &vm.fn
	old := f.libs[strings.ToLower(name)]
	if old != nil && !replace {
		return "", "ERR Library '" + name + "' already exists"
	}
	lib := &Library{Name: name, Code: code}
	if errText := vm.runLibrary(lib, nowMs); errText != "" {
		return "", errText
	}
	if len(lib.Functions) == 0 {
		return "", "ERR No functions registered"
	}
	for _, fn := range lib.Functions {
		if other := f.funcs[strings.ToLower(fn.Name)]; other != nil && other.Library != old {
			return "", "ERR Function " + fn.Name + " already exists"
		}
	}
	if old != nil {
		vm.deleteLibrary(old)
	}
	vm.installLibrary(lib)
	return name, ""
}

func (vm *VM) installLibrary(lib *Library) {
	vm.fn.libs[strings.ToLower(lib.Name)] = lib
	for _, fn := range lib.Functions {
		vm.fn.funcs[strings.ToLower(fn.Name)] = fn
	}
}

func (vm *VM) deleteLibrary(lib *Library) {
	delete(vm.fn.libs, strings.ToLower(lib.Name))
	for _, fn := range lib.Functions {
		delete(vm.fn.funcs, strings.ToLower(fn.Name))
	}
}

// runLibrary compiles the library code and runs it against the load-time
// globals, collecting the functions it registers into lib.
func (vm *VM) runLibrary(lib *Library, nowMs func() int64) string {
	L := vm.L
	vm.fnRan = true
	body := lib.Code // without the shebang line, keeping the line numbers
	if nl := strings.IndexByte(body, '\n'); nl >= 0 {
		body = body[nl:]
	} else {
		body = ""
	}
	fn, err := L.Load(strings.NewReader(body), "user_function")
	if err != nil {
		msg := compileError(err.Error(), "user_function", strings.Count(body, "\n")+1)
		if isSyntaxError(msg) {
			if puc := checkSyntax(body, "user_function"); puc != "" {
				msg = puc // C Lua's words for it
			}
		}
		return "ERR Error compiling function: " + msg
	}
	if msg := ambiguousCall(body, "user_function"); msg != "" {
		return "ERR Error compiling function: " + msg
	}
	f := &vm.fn
	fn.Env = f.env
	f.envMeta.RawSetString("__index", f.loadAPI)
	f.loading = lib
	start := nowMs()
	vm.hook = hookCtx{interrupt: func() bool { return nowMs()-start > loadTimeoutMs }}
	L.SetContext(&vm.hook)
	defer func() {
		L.RemoveContext()
		f.envMeta.RawSetString("__index", f.globals)
		f.loading = nil
		L.SetTop(0)
	}()
	L.Push(fn)
	if err := L.PCall(0, 0, nil); err != nil {
		msg := err.Error()
		if vm.hook.killed {
			msg = "ERR FUNCTION LOAD timeout"
		} else if ae, ok := err.(*lua.ApiError); ok {
			switch o := ae.Object.(type) {
			case *lua.LTable:
				if s, ok := o.RawGetString("err").(lua.LString); ok {
					msg = string(s)
				}
			case lua.LString:
				msg = "ERR " + string(o)
			}
		}
		return "ERR Error registering functions: " + msg
	}
	return ""
}

// registerFunction is redis.register_function (function_lua.c).
func (vm *VM) registerFunction(L *lua.LState) int {
	lib := vm.fn.loading
	if lib == nil {
		L.Error(errorTable(L, "redis.register_function can only be called on FUNCTION LOAD command"), 0)
	}
	fail := func(msg string) { L.Error(errorTable(L, msg), 0) }
	f := &Function{Library: lib}
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			fail("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		var errText string
		t.ForEach(func(k, v lua.LValue) {
			if errText != "" {
				return
			}
			ks, ok := k.(lua.LString)
			if !ok {
				if _, isNum := k.(lua.LNumber); !isNum {
					errText = "named argument key given to redis.register_function is not a string"
					return
				}
				ks = lua.LString(lua.LVAsString(k))
			}
			switch strings.ToLower(string(ks)) {
			case "function_name":
				if !isLuaString(v) {
					errText = "function_name argument given to redis.register_function must be a string"
					return
				}
				f.Name = lua.LVAsString(v)
			case "description":
				if !isLuaString(v) {
					errText = "description argument given to redis.register_function must be a string"
					return
				}
				f.Description, f.HasDesc = lua.LVAsString(v), true
			case "callback":
				cb, ok := v.(*lua.LFunction)
				if !ok {
					errText = "callback argument given to redis.register_function must be a function"
					return
				}
				f.fn = cb
			case "flags":
				ft, ok := v.(*lua.LTable)
				if !ok {
					errText = "flags argument to redis.register_function must be a table representing function flags"
					return
				}
				for i := 1; ; i++ {
					fv := ft.RawGetInt(i)
					if fv == lua.LNil {
						break
					}
					fl, ok := ParseFlag(strings.ToLower(lua.LVAsString(fv)))
					if !isLuaString(fv) || !ok {
						errText = "unknown flag given"
						return
					}
					f.Flags |= fl
				}
			default:
				errText = "unknown argument given to redis.register_function"
			}
		})
		if errText != "" {
			fail(errText)
		}
		if f.Name == "" && !hasKey(t, "function_name") {
			fail("redis.register_function must get a function name argument")
		}
		if f.fn == nil {
			fail("redis.register_function must get a callback argument")
		}
	case 2:
		if !isLuaString(L.Get(1)) {
			fail("first argument to redis.register_function must be a string")
		}
		f.Name = lua.LVAsString(L.Get(1))
		cb, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			fail("second argument to redis.register_function must be a function")
		}
		f.fn = cb
	default:
		fail("wrong number of arguments to redis.register_function")
	}
	if !ValidName(f.Name) {
		// sic: Redis words the function-name error as the library-name one
		fail("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long")
	}
	for _, other := range lib.Functions {
		if strings.EqualFold(other.Name, f.Name) {
			fail("Function already exists in the library")
		}
	}
	lib.Functions = append(lib.Functions, f)
	return 0
}

func isLuaString(v lua.LValue) bool {
	switch v.(type) {
	case lua.LString, lua.LNumber:
		return true
	}
	return false
}

func hasKey(t *lua.LTable, name string) bool {
	found := false
	t.ForEach(func(k, _ lua.LValue) {
		if strings.EqualFold(lua.LVAsString(k), name) {
			found = true
		}
	})
	return found
}

// Function returns the function called name (any case), or nil.
func (vm *VM) Function(name string) *Function { return vm.fn.funcs[strings.ToLower(name)] }

// Library returns the library called name (any case), or nil.
func (vm *VM) Library(name string) *Library { return vm.fn.libs[strings.ToLower(name)] }

// DeleteLibrary removes a library and its functions; false when there is none.
func (vm *VM) DeleteLibrary(name string) bool {
	lib := vm.Library(name)
	if lib == nil {
		return false
	}
	vm.deleteLibrary(lib)
	return true
}

// FlushFunctions removes every library.
func (vm *VM) FlushFunctions() {
	if len(vm.fn.libs) > 0 || len(vm.fn.funcs) > 0 {
		vm.fn.libs = map[string]*Library{}
		vm.fn.funcs = map[string]*Function{}
	}
	// Redis starts a new Lua state for functions: fresh libraries (cjson's
	// settings back to their defaults), unless no function ran since the last
	if vm.libs != nil && vm.fnRan {
		vm.fnRan = false
		f := &vm.fn
		for _, name := range extraLibs { // the functions' own views, not eval's
			if v, ok := f.globals.RawGetString(name).(*lua.LTable); ok && v != vm.globals.RawGetString(name) {
				vm.forgetView(v)
			}
		}
		delete(vm.protected, f.globals)
		f.globals = vm.functionGlobals(vm.L)
		f.envMeta.RawSetString("__index", f.globals)
		vm.real[f.env] = f.globals
		vm.protected[f.globals] = true
	}
}

// Libraries returns the libraries sorted by name.
func (vm *VM) Libraries() []*Library {
	out := make([]*Library, 0, len(vm.fn.libs))
	for _, l := range vm.fn.libs {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// NumFunctions is the number of registered functions.
func (vm *VM) NumFunctions() int { return len(vm.fn.funcs) }

// ReplaceLibraries installs libs in place of every library (FUNCTION RESTORE
// FLUSH) or beside them; the caller has checked for clashes.
func (vm *VM) InstallLibraries(libs []*Library) {
	for _, l := range libs {
		if old := vm.Library(l.Name); old != nil {
			vm.deleteLibrary(old)
		}
		vm.installLibrary(l)
	}
}

// CompileLibraries loads each library's code into a new library set without
// installing it (FUNCTION RESTORE), returning the error of the first that fails.
func (vm *VM) CompileLibraries(codes []string, nowMs func() int64) ([]*Library, string) {
	var out []*Library
	names := map[string]bool{}
	for _, code := range codes {
		engine, name, errText := libraryMeta(code)
		if errText != "" {
			return nil, errText
		}
		if !strings.EqualFold(engine, "lua") {
			return nil, "ERR Engine '" + engine + "' not found"
		}
		lib := &Library{Name: name, Code: code}
		if errText := vm.runLibrary(lib, nowMs); errText != "" {
			return nil, errText
		}
		if len(lib.Functions) == 0 {
			return nil, "ERR No functions registered"
		}
		for _, fn := range lib.Functions {
			if names[strings.ToLower(fn.Name)] {
				return nil, "ERR Function " + fn.Name + " already exists"
			}
			names[strings.ToLower(fn.Name)] = true
		}
		out = append(out, lib)
	}
	return out, ""
}

// FCall runs f with keys and args (passed as its two arguments, not as
// globals) and appends its reply to w; see Eval for noStats.
func (vm *VM) FCall(f *Function, run *Run, w *resp.Writer) (noStats bool) {
	vm.fnRan = true
	return vm.call(f.fn, run, w, stringArray(vm.L, run.Keys), stringArray(vm.L, run.Args))
}

// LibraryBytes approximates the memory the libraries hold (their code).
func (vm *VM) LibraryBytes() int {
	n := 0
	for _, l := range vm.fn.libs {
		n += len(l.Code) + 64*len(l.Functions)
	}
	return n
}
