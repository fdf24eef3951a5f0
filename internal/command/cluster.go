package command

// CLUSTER and the cluster connection commands (READONLY, READWRITE, ASKING):
// HotKV runs standalone, as redis-server does without cluster-enabled. Every
// CLUSTER subcommand, HELP included, and the three connection commands reply
// Redis's "This instance has cluster support disabled"; the table still lists
// them (COMMAND, COMMAND DOCS, a script's refusal of CLUSTER RESET as
// noscript), with Redis 8.6's arities, flags and tips.

const errClusterDisabled = "ERR This instance has cluster support disabled"

func clusterCommands() []*Spec {
	const f = Fast
	conn := []string{"@fast", "@connection"} // their ACL categories (CONNECTION)
	return []*Spec{
		{Name: "cluster", Arity: -2, Subs: clusterSubcommands()},
		{Name: "asking", Arity: 1, Flags: f, ACL: conn, Run: clusterDisabled},
		{Name: "readonly", Arity: 1, Flags: f | Loading | Stale, ACL: conn, Run: clusterDisabled},
		{Name: "readwrite", Arity: 1, Flags: f | Loading | Stale, ACL: conn, Run: clusterDisabled},
	}
}

func clusterSubcommands() []*Spec {
	return []*Spec{
		{Name: "addslots", Arity: -3, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "addslotsrange", Arity: -4, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "bumpepoch", Arity: 2, Flags: NoAsyncLoading | Admin | Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
		{Name: "count-failure-reports", Arity: 3, Flags: Admin | Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
		{Name: "countkeysinslot", Arity: 3, Flags: Stale, Run: clusterDisabled},
		{Name: "delslots", Arity: -3, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "delslotsrange", Arity: -4, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "failover", Arity: -2, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "flushslots", Arity: 2, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "forget", Arity: 3, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "getkeysinslot", Arity: 4, Flags: Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
		{Name: "help", Arity: 2, Flags: Loading | Stale, Run: clusterHelp},
		{Name: "info", Arity: 2, Flags: Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
		{Name: "keyslot", Arity: 3, Flags: Stale, Run: clusterDisabled},
		{Name: "links", Arity: 2, Flags: Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
		{Name: "meet", Arity: -4, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "migration", Arity: -4, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "myid", Arity: 2, Flags: Stale, Run: clusterDisabled},
		{Name: "myshardid", Arity: 2, Flags: Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
		{Name: "nodes", Arity: 2, Flags: Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
		{Name: "replicas", Arity: 3, Flags: Admin | Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
		{Name: "replicate", Arity: 3, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "reset", Arity: -2, Flags: Admin | Stale | NoScript, Run: clusterDisabled},
		{Name: "saveconfig", Arity: 2, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "set-config-epoch", Arity: 3, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "setslot", Arity: -4, Flags: NoAsyncLoading | Admin | Stale, Run: clusterDisabled},
		{Name: "shards", Arity: 2, Flags: Loading | Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
		{Name: "slaves", Arity: 3, Flags: Admin | Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
		{Name: "slot-stats", Arity: -4, Flags: Stale | Loading, Tips: []string{"nondeterministic_output", "request_policy:all_shards"}, Run: clusterDisabled},
		{Name: "slots", Arity: 2, Flags: Loading | Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
		{Name: "syncslots", Arity: -3, Flags: NoAsyncLoading | Admin | Stale, Tips: []string{"nondeterministic_output"}, Run: clusterDisabled},
	}
}

// clusterDisabled is clusterCommand (and readonlyCommand, ...) without
// cluster-enabled.
func clusterDisabled(c *Ctx) { c.Error(errClusterDisabled) }

// clusterHelp: Redis checks cluster-enabled before HELP too.
func clusterHelp(c *Ctx) { c.Error(errClusterDisabled) }
