package server_test

import (
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestModuleCommandGate: MODULE LOAD, LOADEX and UNLOAD are gated by
// enable-module-command ("no" by default: the refusal is in server.golden);
// allowed, they fail as Redis's do for a module that does not load and a
// name that is not loaded, since HotKV loads no modules. DEBUG keeps its own
// gate, enable-debug-command.
func TestModuleCommandGate(t *testing.T) {
	srv := hotkvtest.Start(t, hotkvtest.WithConfig("enable-module-command", "yes"),
		hotkvtest.WithConfig("enable-debug-command", "no"))
	c := hotkvtest.Dial(t, srv.Addr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"MODULE", "LOAD", "/nonexistent.so"}, "-ERR Error loading the extension. Please check the server logs.\r\n"},
		{[]string{"MODULE", "LOADEX", "/x.so", "ARGS", "a"}, "-ERR Error loading the extension. Please check the server logs.\r\n"},
		{[]string{"MODULE", "UNLOAD", "vectorset"}, "-ERR Error unloading module: no such module with that name\r\n"},
		{[]string{"MODULE", "LIST"}, "*0\r\n"},
		{[]string{"DEBUG", "ERROR", "x"}, "-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", " +
			"you can run it from a local connection, otherwise you need to set this option in the configuration file, " +
			"and then restart the server.\r\n"},
	} {
		if got := c.Do(tc.args...); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
}
