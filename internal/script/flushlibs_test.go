package script

import (
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/hotkv/hotkv/internal/resp"
	"github.com/hotkv/hotkv/internal/script/lualib"
)

// SCRIPT FLUSH and FUNCTION FLUSH start the extra libraries anew, read-only
// as at start (a flushed EVAL's cjson was left writable), and forget the old
// ones: 500 flushes leave the registries of read-only tables as they were.
func TestFlushKeepsLibrariesReadonlyWithoutLeak(t *testing.T) {
	vm := NewVM(Options{Libs: lualib.Open, LibReadonly: lualib.IsReadonly, Version: "8.4.0"})
	run := func(body string) string {
		t.Helper()
		s, errText := vm.Load(body)
		if errText != "" {
			return errText
		}
		var w resp.Writer
		vm.Eval(s, &Run{Host: &fakeHost{}, Name: s.SHA}, &w)
		return string(w.Buf)
	}
	protected, real := len(vm.protected), len(vm.real)
	for range 500 {
		run("return 1") // a script ran: the flush renews the libraries
		vm.Flush()
		vm.fnRan = true
		vm.FlushFunctions()
	}
	if len(vm.protected) != protected || len(vm.real) != real {
		t.Fatalf("registries grew: protected %d -> %d, real %d -> %d", protected, len(vm.protected), real, len(vm.real))
	}
	for _, lib := range []string{"cjson.encode", "cmsgpack.pack", "bit.band", "struct.pack"} {
		if got := run(lib + " = function() return 1 end"); !strings.Contains(got, "Attempt to modify a readonly table") {
			t.Errorf("%s after SCRIPT FLUSH: %q", lib, got)
		}
	}
	if got := run("return cjson.encode({1})"); got != "$3\r\n[1]\r\n" {
		t.Fatalf("cjson after the flushes: %q", got)
	}
}

// A flush renews the libraries only when a script (or function) ran since
// the last one; otherwise they are as fresh as a flush would make them, and
// it makes no garbage (Redis's "script flush will not leak memory" test reads
// the allocator after 500 flushes in a row).
func TestFlushOfFreshLibrariesIsFree(t *testing.T) {
	vm := NewVM(Options{Libs: lualib.Open, LibReadonly: lualib.IsReadonly, Version: "8.6.3"})
	cjson := func() lua.LValue { return vm.globals.RawGetString("cjson") }
	before := cjson()
	if a := testing.AllocsPerRun(100, func() { vm.Flush(); vm.FlushFunctions() }); a != 0 {
		t.Errorf("flushes with nothing run: %v allocations", a)
	}
	if cjson() != before {
		t.Fatal("a flush with no script run renewed cjson")
	}
	s, _ := vm.Load("return 1")
	var w resp.Writer
	vm.Eval(s, &Run{Host: &fakeHost{}, Name: s.SHA}, &w)
	vm.Flush()
	if cjson() == before {
		t.Fatal("a flush after a script ran kept its cjson")
	}
	if vm.Lookup(s.SHA) != nil {
		t.Fatal("the script survived SCRIPT FLUSH")
	}
}
