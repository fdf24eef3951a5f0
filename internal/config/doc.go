// Package config is HotKV's registry of server parameters, with Redis's names,
// types, defaults, bounds, error texts and file syntax.
//
// One table (params.go) declares every parameter once: its name and alias, its
// kind (bool, integer, memory, enum, string or one of Redis's special formats),
// its default, whether CONFIG SET may change it, and whether HotKV honours it
// today. Everything else is derived from that table: the typed getters the
// server reads on hot paths, CONFIG GET (Get, Match), CONFIG SET (Set, SetFrom,
// OnChange), the redis.conf loader (LoadFile, ParseArgs), CONFIG REWRITE
// (Rewrite) and generated documentation (Params).
//
// The reference is Redis 8.x's src/config.c (and the parsers it calls in
// util.c, sds.c and notify.c): values are accepted, rejected, printed and
// rewritten exactly as Redis does, error texts included, quirks included where
// they are observable (for example memory values that overflow saturate, and an
// empty memory value means 0). Where HotKV deliberately differs the doc comment
// of the function says so.
//
// Concurrency: every method is safe for concurrent use. Readers (Int, Bool,
// String, Get, Match, Params, File) never lock: each parameter's value is an
// immutable snapshot behind an atomic pointer. Writers (Set, SetFrom, LoadFile,
// ParseArgs, Rewrite, OnChange) are serialised by one mutex. A reader that runs
// while a multi-parameter Set commits may see some of its parameters changed and
// others not yet.
package config

// RedisVersion is the Redis version whose behaviour this package follows. It
// appears in the header of configuration-file errors ("*** FATAL CONFIG FILE
// ERROR (Redis 8.6.3) ***"); it must equal command.Version (INFO redis_version, HELLO).
const RedisVersion = "8.6.3"
