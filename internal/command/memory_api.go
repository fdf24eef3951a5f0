package command

// MemoryStats is what MEMORY STATS and MEMORY DOCTOR report (Redis's
// redisMemOverhead), as the server measures it. Byte counts; see the
// server's memstats.go for what each one is in HotKV.
type MemoryStats struct {
	PeakAllocated, TotalAllocated, StartupAllocated int64
	ClientsNormal, ClientsSlaves, ReplBacklog       int64
	LuaCaches, FunctionsCaches, ScriptVMs           int64
	DBs                                             []DBOverhead
	HashtableLUT, HashtableRehashing                int64
	OverheadTotal                                   int64
	RehashingCount                                  int64
	Keys, BytesPerKey, Dataset                      int64
	DatasetPerc, PeakPerc                           float64
	AllocatorAllocated, AllocatorActive             int64
	AllocatorResident                               int64
	RSS                                             int64
	Clients, CachedScripts                          int64
}

// DBOverhead is one database's line of MEMORY STATS.
type DBOverhead struct {
	ID            int
	Main, Expires int64
}
