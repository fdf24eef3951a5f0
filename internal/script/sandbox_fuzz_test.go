package script

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/hotkv/hotkv/internal/resp"
	"github.com/hotkv/hotkv/internal/script/lualib"
)

// The sandbox must stop every script: no builtin may loop or allocate
// without bound outside the instructions whose hook lets SCRIPT KILL stop
// a script and checks its memory (bounded.go, memlimit.go). FuzzSandbox runs
// random scripts with a kill after runFor and a memory limit, and fails when
// one does not come back in time or grows the heap far past the limit.

const (
	runFor     = 300 * time.Millisecond // the script is killed after this
	hangAfter  = 5 * time.Second        // not back by then: a hang
	fuzzMemCap = 16 << 20               // the script memory limit
	// growthCap is the heap growth that counts as unbounded: the limit, and
	// what memEvery instructions may allocate before the check sees it
	growthCap = fuzzMemCap + 256<<20
)

// sandboxRun compiles and runs body on vm as EVAL does, killed after
// runFor, and reports a hang (of the compiler too) or an unbounded heap
// growth.
func sandboxRun(vm *VM, body string) error {
	runtime.GC()
	before := heapObjects()
	done := make(chan struct{})
	var peak uint64
	go func() {
		defer close(done)
		s, errText := vm.Load(body)
		if errText != "" {
			return // does not compile: nothing runs
		}
		deadline := time.Now().Add(runFor)
		run := &Run{Host: &fakeHost{replies: map[string]string{"get": "$1\r\nv\r\n", "set": "+OK\r\n"}}, Name: s.SHA,
			Interrupt: func() bool {
				peak = max(peak, heapObjects())
				return time.Now().After(deadline)
			}}
		vm.Eval(s, run, &resp.Writer{Proto: 2})
	}()
	select {
	case <-done:
	case <-time.After(hangAfter):
		return fmt.Errorf("the script did not stop within %v of its kill", hangAfter-runFor)
	}
	if grew := int64(max(peak, heapObjects())) - int64(before); grew > growthCap {
		return fmt.Errorf("the heap grew by %d MB (limit %d MB)", grew>>20, fuzzMemCap>>20)
	}
	return nil
}

func newFuzzVM() *VM {
	vm := NewVM(Options{Libs: lualib.Open, Version: "8.4.0"})
	vm.MemLimit = func() int64 { return fuzzMemCap }
	return vm
}

// sandboxSeeds are scripts that hung or exhausted gopher-lua's builtins, and
// the loops the hook must stop.
var sandboxSeeds = []string{
	"return {unpack({1,2,3}, -2, 2147483647)}",
	"return unpack({}, 1, 1e9)",
	"return string.rep('x', 1e12)",
	"return string.rep('ab', 2^31)",
	"return string.rep('', 1e15)",
	"return string.format('%99999d', 1)",
	"return string.format('%.99f|%99.99f', 1, 2)",
	"return table.concat({}, ',', 1, 1e12)",
	"local t = {} for i = 1, 1e9 do t[i] = i end",
	"local t = {} while true do table.insert(t, 'xxxxxxxx') end",
	"local s = string.rep('x', 1e6) local t = {} for i = 1, 1e6 do t[i] = s .. i end",
	"while true do end",
	"local function f() return f() end return f()",
	"local function f() return 1 + f() end return f()",
	"local co = coroutine.wrap(function() while true do coroutine.yield() end end) while true do co() end",
	"while true do pcall(error, 'x') end",
	"local t = {} for i = 1, 7990 do t[i] = i end return {unpack(t)}",
	"return cjson.encode(setmetatable({}, {}))",
	"return cmsgpack.pack(string.rep('x', 1e6))",
	"return struct.pack('i', 1)",
	"return string.gsub(string.rep('a', 1e5), 'a', '%0%0')",
	"local s = '' for i = 1, 1e6 do s = s .. 'x' end",
	"local s = 'x' for i = 1, 64 do s = s .. s end return #s",
	"local s = string.rep('x', 1e7) local t = {} for i = 1, 1000 do t[i] = s end return #cjson.encode(t)",
	"local s = string.rep('x', 1e7) local t = {} for i = 1, 1000 do t[i] = s end return #cmsgpack.pack(t)",
	"local s = 'xxxxxxxx' for i = 1, 8 do s = s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s end return #s",
}

func FuzzSandbox(f *testing.F) {
	for _, s := range sandboxSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if err := sandboxRun(newFuzzVM(), body); err != nil { // a VM each: nothing carries over
			t.Fatalf("%q: %v", body, err)
		}
	})
}

// TestSandboxSeedsStop runs the seeds (also what `go test` runs of
// FuzzSandbox), each with its expectation where it has one.
func TestSandboxSeedsStop(t *testing.T) {
	for _, s := range sandboxSeeds {
		if err := sandboxRun(newFuzzVM(), s); err != nil { // a VM each: one left hanging must not take the next
			t.Errorf("%q: %v", s, err)
		}
	}
	vm, h := newFuzzVM(), &fakeHost{}
	for _, tc := range []struct{ body, want string }{
		{"local t = {} for i = 1, 1e9 do t[i] = i end", "-" + errScriptOOM},
		{"return string.rep('x', 1e12)", "-ERR user_script:1: not enough memory"},
		{"return table.concat({string.rep('x', 1e6), string.rep('y', 1e6)}, string.rep('-', 70e6))", "-ERR user_script:1: not enough memory"},
		{"return #string.rep('x', 1e6)", ":1000000"},
		{"local s = 'x' for i = 1, 64 do s = s .. s end return #s", "-ERR user_script:1: not enough memory"},
		{"local s = string.rep('x', 1e7) local t = {} for i = 1, 1000 do t[i] = s end return #cjson.encode(t)", "-ERR user_script:1: not enough memory"},
		{"local s = string.rep('x', 1e7) local t = {} for i = 1, 1000 do t[i] = s end return #cmsgpack.pack(t)", "-ERR user_script:1: not enough memory"},
		{"local ok, e = pcall(function() local s = 'x' for i = 1, 64 do s = s .. s end end) return e", "$32\r\nuser_script:1: not enough memory"},
	} {
		if got := eval(t, vm, h, tc.body, nil, nil, 2); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q: %.200q, want %q...", tc.body, got, tc.want)
		}
	}
}

// TestSandboxHarnessCatchesUnboundedBuiltins: a builtin planted without a
// bound (one that blocks, one that allocates past the limit) fails the
// harness, so the fuzz target would find it.
func TestSandboxHarnessCatchesUnboundedBuiltins(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MB and waits out a hang")
	}
	vm := newFuzzVM()
	release := make(chan struct{})
	defer close(release)
	vm.globals.RawSetString("planted_block", vm.L.NewFunction(func(L *lua.LState) int {
		select { // no instruction runs: the hook cannot stop it
		case <-release:
		case <-time.After(hangAfter + 5*time.Second):
		}
		return 0
	}))
	var kept [][]byte
	vm2 := newFuzzVM() // vm's last run stays blocked until the test ends
	vm2.globals.RawSetString("planted_alloc", vm2.L.NewFunction(func(L *lua.LState) int {
		for i := 0; i < 2*growthCap/fuzzMemCap; i++ {
			kept = append(kept, make([]byte, fuzzMemCap)) // twice what counts as unbounded, in one call
		}
		return 0
	}))
	if err := sandboxRun(vm, "planted_block()"); err == nil || !strings.Contains(err.Error(), "did not stop") {
		t.Errorf("a blocking builtin: %v", err)
	}
	if err := sandboxRun(vm2, "planted_alloc()"); err == nil || !strings.Contains(err.Error(), "heap grew") {
		t.Errorf("an allocating builtin: %v", err)
	}
	runtime.KeepAlive(kept)
}
