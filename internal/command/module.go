package command

// MODULE: HotKV loads no Redis modules (they are C shared objects built
// against Redis's module API). MODULE LIST is empty; LOAD and LOADEX fail
// as a module that does not load fails in Redis, UNLOAD as an unknown
// module; the three are gated by enable-module-command, as in Redis.

func moduleSubcommands() []*Spec {
	const gated = NoAsyncLoading | Admin | NoScript | Protected
	return []*Spec{
		{Name: "help", Arity: 2, Flags: Loading | Stale, Run: moduleHelp},
		{Name: "list", Arity: 2, Flags: Admin | NoScript, Tips: []string{"nondeterministic_output_order"}, Run: moduleList},
		{Name: "load", Arity: -3, Flags: gated, Gate: moduleGate, Run: moduleLoad},
		{Name: "loadex", Arity: -3, Flags: gated, Gate: moduleGate, Run: moduleLoad},
		{Name: "unload", Arity: 3, Flags: gated, Gate: moduleGate, Run: moduleUnload},
	}
}

func moduleHelp(c *Ctx) {
	writeHelp(c, "MODULE",
		"LIST",
		"    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]",
		"    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
		"    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>",
		"    Unload a module.")
}

// moduleList: no module is loaded.
func moduleList(c *Ctx) { c.W.ArrayLen(0) }

func moduleLoad(c *Ctx) {
	c.Srv.Warn("Module " + string(c.Argv[2]) + " failed to load: HotKV does not load Redis modules")
	c.Error("ERR Error loading the extension. Please check the server logs.")
}

func moduleUnload(c *Ctx) {
	c.Srv.Warn("Error unloading module " + string(c.Argv[2]) + ": no such module with that name")
	c.Error("ERR Error unloading module: no such module with that name")
}
