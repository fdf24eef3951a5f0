package config

import (
	"math"
	"strings"
)

// C limits used as bounds, as in config.c.
const (
	intMax    = math.MaxInt32
	intMin    = math.MinInt32
	uintMax   = math.MaxUint32
	longMax   = math.MaxInt64
	ullongMax = -1 // ULLONG_MAX as a C long long; compared unsigned (fUnsigned)
	kb        = 1024
	mb        = 1024 * kb
	gb        = 1024 * mb
)

// Honoured parameters: HotKV acts on exactly these today.
//
//	bind, port, unixsocket, unixsocketperm, pidfile, always-show-logo,
//	databases, timeout, tcp-keepalive, maxclients, loglevel, logfile, proto-max-bulk-len, client-query-buffer-limit,
//	client-output-buffer-limit, requirepass, hz, io-threads,
//	enable-debug-command, latency-tracking, latency-tracking-info-percentiles,
//	busy-reply-threshold (alias lua-time-limit), notify-keyspace-events,
//	lazyfree-lazy-* (expire, eviction, server-del, user-del, user-flush),
//	tracking-table-max-keys, maxmemory, maxmemory-policy, maxmemory-samples,
//	maxmemory-eviction-tenacity, lfu-log-factor, lfu-decay-time,
//	min-replicas-to-write, min-replicas-max-lag, hll-sparse-max-bytes, and the
//	encoding thresholds (hash-, list-, set-, zset-max-listpack-*,
//	set-max-intset-entries, stream-node-max-*), the settings of new streams
//	(stream-idmp-duration, stream-idmp-maxsize), and the RDB snapshot ones (save, dir, dbfilename,
//	rdbcompression, rdbchecksum, stop-writes-on-bgsave-error, shutdown-on-sigint,
//	shutdown-on-sigterm, and the hidden key-load-delay, rdb-key-save-delay and
//	loading-process-events-interval-bytes), and the AOF's (appendonly,
//	appendfilename, appenddirname, appendfsync, no-appendfsync-on-rewrite,
//	auto-aof-rewrite-percentage, auto-aof-rewrite-min-size, aof-load-truncated,
//	aof-load-corrupt-tail-max-size, aof-use-rdb-preamble, aof-timestamp-enabled),
//	the scheduling of full syncs (repl-diskless-sync-delay,
//	repl-diskless-sync-max-replicas) and replica-lazy-flush,
//	and HotKV's metrics listener (metrics-port, metrics-bind)
//
// Every other parameter is accepted, validated, stored, printed and rewritten
// exactly as Redis 8 does, so that tools and client libraries that read or set
// them keep working, but it changes nothing in HotKV's behaviour yet. Each row
// says which with fHonoured, which Params reports as ParamInfo.Honoured.
//
// Names, aliases, bounds, defaults and mutability are Redis 8.6's, with these
// HotKV defaults: bind is 127.0.0.1 (Redis: "* -::*") and save is "" (no
// snapshots; Redis: "3600 1 300 100 60 10000").
//
// paramTable returns the rows in a stable order: CONFIG GET patterns and
// CONFIG REWRITE's appended lines follow it.
func paramTable() []paramDef {
	const (
		H   = fHonoured
		imm = fImmutable
	)
	protected := enumNames("no", "yes", "local")
	return []paramDef{
		// Network and clients.
		specP("bind", "", H|fMulti, bindSpecial([]string{"127.0.0.1"}), "Addresses to listen on (HotKV default 127.0.0.1)."),
		intP("port", "", H, 0, 65535, 6379, "TCP port to listen on."),
		intP("tcp-backlog", "", imm, 0, intMax, 511, "listen() backlog."),
		strP("unixsocket", "", H|imm|fNullable|fNullDefault, "", nil, "Unix socket path to listen on."),
		intP("unixsocketperm", "", H|imm|fOctal|fUnsigned, 0, 0o777, 0, "Permissions of the Unix socket (octal)."),
		intP("timeout", "", H, 0, intMax, 0, "Close a client after this many idle seconds (0: never)."),
		intP("tcp-keepalive", "", H, 0, intMax, 300, "TCP keepalive interval in seconds."),
		intP("maxclients", "", H|fUnsigned, 1, uintMax, 10000, "Maximum number of connected clients."),
		// TLS (decision 0047): crypto/tls on the tls-port listeners.
		intP("tls-port", "", H, 0, 65535, 0, "TLS port to listen on (0: none)."),
		// HotKV's metrics listener (decision 0048): /metrics, the status page.
		intP("metrics-port", "", H|imm, 0, 65535, 0, "HotKV: HTTP port of /metrics (Prometheus) and the status page (0: off)."),
		strP("metrics-bind", "", H|imm, "127.0.0.1", nil, "HotKV: address the metrics listener binds (no authentication: keep it private)."),
		intP("tls-session-cache-size", "", 0, 0, intMax, 20*1024, "TLS session cache entries (HotKV resumes with stateless session tickets: nothing to size)."),
		intP("tls-session-cache-timeout", "", H, 0, intMax, 300, "Seconds a TLS session may be resumed."),
		boolP("tls-cluster", "", 0, false, "TLS on the cluster bus (HotKV has no cluster mode)."),
		boolP("tls-replication", "", H, false, "TLS for a replica's link to its master (to the master's TLS port; the certificates below, else tls-cert-file)."),
		enumP("tls-auth-clients", "", H, []enumEntry{{"no", 0}, {"yes", 1}, {"optional", 2}}, "yes", "Whether TLS clients must present a certificate the CA signed (optional: verified when given)."),
		enumP("tls-auth-clients-user", "", H, []enumEntry{{"CN", 1}, {"off", 0}}, "off", "CN: a client certificate's Common Name is the ACL user the connection starts as."),
		boolP("tls-prefer-server-ciphers", "", 0, false, "Server cipher order (Go's crypto/tls always chooses by its own order)."),
		boolP("tls-session-caching", "", H, true, "Whether TLS sessions may be resumed."),
		strP("tls-cert-file", "", H|fVolatile|fNullable|fNullDefault, "", nil, "Server certificate (PEM)."),
		strP("tls-key-file", "", H|fVolatile|fNullable|fNullDefault, "", nil, "Server private key (PEM)."),
		strP("tls-key-file-pass", "", H|fSensitive|fNullable|fNullDefault, "", nil, "Passphrase of an encrypted tls-key-file."),
		strP("tls-client-cert-file", "", H|fVolatile|fNullable|fNullDefault, "", nil, "Certificate for outgoing TLS connections (replication)."),
		strP("tls-client-key-file", "", H|fVolatile|fNullable|fNullDefault, "", nil, "Key for outgoing TLS connections (replication)."),
		strP("tls-client-key-file-pass", "", H|fSensitive|fNullable|fNullDefault, "", nil, "Passphrase of tls-client-key-file."),
		strP("tls-dh-params-file", "", fVolatile|fNullable|fNullDefault, "", nil, "DH parameters (Go's crypto/tls offers no finite-field DHE: ECDHE only)."),
		strP("tls-ca-cert-file", "", H|fVolatile|fNullable|fNullDefault, "", nil, "CA certificates that sign client certificates (PEM)."),
		strP("tls-ca-cert-dir", "", H|fVolatile|fNullable|fNullDefault, "", nil, "Directory of CA certificates (PEM files)."),
		strP("tls-protocols", "", H|fNullable|fNullDefault, "", nil, "TLS versions accepted (TLSv1, TLSv1.1, TLSv1.2, TLSv1.3; default TLSv1.2 TLSv1.3)."),
		strP("tls-ciphers", "", H|fNullable|fNullDefault, "", nil, "TLS 1.2 cipher list (OpenSSL names)."),
		strP("tls-ciphersuites", "", H|fNullable|fNullDefault, "", nil, "TLS 1.3 cipher suites (all of Go's three, or refused: Go cannot restrict them)."),
		boolP("protected-mode", "", H, true, "Refuse clients that are not on loopback or a Unix socket while the default user has no password."),
		strP("bind-source-addr", "", fNullable|fNullDefault, "", nil, "Source address for outgoing connections."),
		intP("proto-max-bulk-len", "", H|fMemory, mb, longMax, 512*mb, "Largest bulk string a client may send."),
		intP("client-query-buffer-limit", "", H|fMemory|fUnsigned, mb, longMax, gb, "Largest query buffer of one client."),
		specP("client-output-buffer-limit", "", H|fMulti, obufSpecial, "Output buffer limits per client class: class hard soft seconds."),
		intP("maxmemory-clients", "", H|fMemory|fPercent, -100, longMax, 0, "Memory all clients may use together, in bytes or N% of maxmemory."),
		intP("tracking-table-max-keys", "", H|fUnsigned, 0, longMax, 1000000, "Keys remembered for client-side caching."),
		intP("io-threads", "", H|imm, 1, 128, 1, "Event loops serving connections (Linux); 1, as Redis's default."),

		// General.
		intP("databases", "", H|imm, 1, intMax, 16, "Number of logical databases."),
		enumP("loglevel", "", H, enumNames("debug", "verbose", "notice", "warning", "nothing"), "notice", "Log verbosity."),
		strP("logfile", "", H|imm, "", nil, "Log file path (\"\": standard output)."),
		boolP("daemonize", "", imm, false, "Run in the background."),
		enumP("supervised", "", imm, enumNames("upstart", "systemd", "auto", "no"), "no", "Supervision interaction."),
		strP("pidfile", "", H|imm|fNullable|fNullDefault, "", nil, "PID file path (written at start, removed at exit)."),
		boolP("always-show-logo", "", H|imm, false, "Show the ASCII logo in non-interactive logs."),
		boolP("set-proc-title", "", imm, true, "Set the process title."),
		strP("proc-title-template", "", 0, "{title} {listen-addr} {server-mode}", validProcTitleTemplate, "Template of the process title (HotKV does not set its process title)."),
		boolP("syslog-enabled", "", imm, false, "Log to syslog."),
		strP("syslog-ident", "", imm, "redis", nil, "Syslog identity."),
		enumP("syslog-facility", "", imm, enumNames("user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"), "local0", "Syslog facility."),
		boolP("crash-log-enabled", "", 0, true, "Write a crash report on fatal signals."),
		boolP("crash-memcheck-enabled", "", 0, true, "Run a memory check in crash reports."),
		boolP("hide-user-data-from-log", "", 0, false, "Keep keys and values out of the log."),
		strP("ignore-warnings", "", 0, "", nil, "Startup warnings to suppress."),
		intP("shutdown-timeout", "", 0, 0, intMax, 10, "Seconds to wait for replicas on shutdown."),
		shutdownP("shutdown-on-sigint", validShutdownFlags, "SHUTDOWN flags applied on SIGINT (default, save, nosave, now, force)."),
		shutdownP("shutdown-on-sigterm", validShutdownFlags, "SHUTDOWN flags applied on SIGTERM (default, save, nosave, now, force)."),
		boolP("jemalloc-bg-thread", "", 0, true, "Let jemalloc purge from a background thread."),
		boolP("disable-thp", "", imm, true, "Disable transparent huge pages."),
		enumP("oom-score-adj", "", 0, []enumEntry{{"no", 0}, {"yes", 1}, {"relative", 1}, {"absolute", 2}}, "no", "How to set the process OOM score."),
		specP("oom-score-adj-values", "", fMulti, oomValuesSpecial, "OOM scores of master, replica and background child."),

		// Security.
		strP("requirepass", "", H|fSensitive|fNullable|fNullDefault|fBinary, "", nil, "Password of the default user."),
		strP("aclfile", "", H|imm, "", nil, "ACL file of the users (ACL LOAD, ACL SAVE); relative to dir."),
		intP("acllog-max-len", "", H, 0, longMax, 128, "Entries kept by ACL LOG."),
		enumP("acl-pubsub-default", "", H, []enumEntry{{"allchannels", 1}, {"resetchannels", 0}}, "resetchannels", "Default channel permissions of new ACL users."),
		enumP("enable-protected-configs", "", H|imm, protected, "no", "Whether CONFIG SET may change protected parameters (dir, dbfilename)."),
		enumP("enable-debug-command", "", H|imm, protected, "no", "Whether the DEBUG command is allowed (yes, local: from loopback clients, no)."),
		enumP("enable-module-command", "", H|imm, protected, "no", "Whether the MODULE command is allowed."),
		enumP("sanitize-dump-payload", "", 0, enumNames("no", "yes", "clients"), "no", "Deep-check RESTORE payloads."),

		// Memory and eviction.
		intP("maxmemory", "", H|fMemory|fUnsigned, 0, ullongMax, 0, "Memory limit for data (0: none)."),
		enumP("maxmemory-policy", "", H, enumNames("volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "volatile-lrm",
			"allkeys-lru", "allkeys-lfu", "allkeys-random", "allkeys-lrm", "noeviction"), "noeviction", "What to evict at maxmemory."),
		intP("maxmemory-samples", "", H, 1, intMax, 5, "Keys sampled per eviction."),
		boolP("protect-locks-from-eviction", "", H, false, "HotKV: SET NX with an expiry protects its key from eviction (BLESS SET key NO-EVICT) while it holds."),
		intP("maxmemory-eviction-tenacity", "", H, 0, 100, 10, "Effort spent evicting per command."),
		intP("lfu-log-factor", "", H, 0, intMax, 10, "LFU counter logarithm factor."),
		intP("lfu-decay-time", "", H, 0, intMax, 1, "Minutes for the LFU counter to decay."),
		boolP("lazyfree-lazy-eviction", "", H, false, "Free evicted values in the background (HotKV: propagates UNLINK instead of DEL)."),
		boolP("lazyfree-lazy-expire", "", H, false, "Free expired values in the background (HotKV: propagates UNLINK instead of DEL)."),
		boolP("lazyfree-lazy-server-del", "", H, false, "Free implicitly deleted values in the background (HotKV: propagates UNLINK instead of DEL)."),
		boolP("lazyfree-lazy-user-del", "", H, false, "Make DEL behave like UNLINK."),
		boolP("lazyexpire-nested-arbitrary-keys", "", H|fHidden, true, "Lazy expiry by SCAN/RANDOMKEY inside MULTI or a script deletes (and propagates) the keys."),
		boolP("lazyfree-lazy-user-flush", "", H, false, "Make FLUSHALL/FLUSHDB default to ASYNC."),
		boolP("activedefrag", "", 0, false, "Active defragmentation (not available: needs Redis's jemalloc)."),
		boolP("activerehashing", "", 0, true, "Rehash main dictionaries incrementally in the background."),

		// Expiry and timers.
		intP("hz", "", H, 0, intMax, 10, "Background task frequency; out-of-range values are clamped to 1..500."),
		boolP("dynamic-hz", "", 0, true, "Scale hz with the number of clients."),
		intP("active-expire-effort", "", 0, 1, 10, 1, "Effort of the active expiry cycle."),
		intP("busy-reply-threshold", "lua-time-limit", H, 0, longMax, 5000, "Milliseconds a script may run before BUSY replies."),

		// Events, latency and slow log.
		specP("notify-keyspace-events", "", H, notifySpecial, "Keyspace notification classes (Ag$lshzxeKEtmdnoc)."),
		boolP("latency-tracking", "", H, true, "Track per-command latency percentiles."),
		specP("latency-tracking-info-percentiles", "", H|fMulti, percentilesSpecial, "Percentiles INFO latencystats reports."),
		intP("latency-monitor-threshold", "", 0, 0, longMax, 0, "Milliseconds above which LATENCY records an event (0: off)."),
		intP("slowlog-log-slower-than", "", 0, -1, longMax, 10000, "Microseconds above which a command enters the slow log."),
		intP("slowlog-max-len", "", 0, 0, longMax, 128, "Entries kept by the slow log."),

		// Snapshots.
		specP("save", "", H|fMulti, saveSpecial, "Snapshot rules: seconds changes ... (HotKV default \"\": none)."),
		specP("dir", "", H|fProtected, dirSpecial, "Working directory for snapshot and AOF files."),
		strP("dbfilename", "", H|fProtected, "dump.rdb", validBaseName("dbfilename", "a filename", false), "Snapshot file name."),
		boolP("rdbcompression", "", H, true, "Compress strings in snapshots."),
		boolP("rdbchecksum", "", H|imm, true, "Checksum snapshots."),
		boolP("stop-writes-on-bgsave-error", "", H, true, "Refuse writes after a failed background save."),
		boolP("rdb-save-incremental-fsync", "", H, true, "fsync snapshots incrementally."),
		boolP("rdb-del-sync-files", "", 0, false, "Delete snapshot files used only for replication."),

		// Append-only file.
		boolP("appendonly", "", H, false, "Log every write to the append-only file."),
		strP("appendfilename", "", H|imm, "appendonly.aof", validBaseName("appendfilename", "a filename", true), "Base name of the append-only files."),
		strP("appenddirname", "", H|imm, "appendonlydir", validBaseName("appenddirname", "a dirname", true), "Directory of the append-only files."),
		enumP("appendfsync", "", H, enumNames("everysec", "always", "no"), "everysec", "When to fsync the append-only file."),
		boolP("no-appendfsync-on-rewrite", "", H, false, "Skip fsync while a rewrite runs."),
		intP("auto-aof-rewrite-percentage", "", H, 0, intMax, 100, "Growth that triggers an AOF rewrite (0: off)."),
		intP("auto-aof-rewrite-min-size", "", H|fMemory, 0, longMax, 64*mb, "Smallest AOF that is rewritten automatically."),
		boolP("aof-load-truncated", "", H, true, "Load a truncated AOF instead of refusing to start."),
		intP("aof-load-corrupt-tail-max-size", "", H|fMemory, 0, longMax, 0, "Cut off a corrupt AOF tail smaller than this when loading (0: refuse to start)."),
		boolP("aof-use-rdb-preamble", "", H, true, "Start rewritten AOFs with a snapshot."),
		boolP("aof-timestamp-enabled", "", H, false, "Write timestamps into the AOF."),
		boolP("aof-disable-auto-gc", "", H|fHidden, false, "Keep the AOF's history files after a rewrite (testing)."),
		boolP("aof-rewrite-incremental-fsync", "", H, true, "fsync AOF rewrites incrementally."),

		// Encodings of small values.
		intP("hash-max-listpack-entries", "hash-max-ziplist-entries", H|fUnsigned, 0, longMax, 512, "Largest hash kept as a listpack, in fields."),
		intP("hash-max-listpack-value", "hash-max-ziplist-value", H|fMemory|fUnsigned, 0, longMax, 64, "Largest field or value of a listpack hash."),
		intP("list-max-listpack-size", "list-max-ziplist-size", H, intMin, intMax, -2, "Size of a list node: entries if positive, -1..-5 for 4kb..64kb."),
		intP("list-compress-depth", "", 0, 0, intMax, 0, "List nodes left uncompressed at each end (0: none compressed)."),
		intP("set-max-intset-entries", "", H|fUnsigned, 0, longMax, 512, "Largest set of integers kept as an intset."),
		intP("set-max-listpack-entries", "", H|fUnsigned, 0, longMax, 128, "Largest set kept as a listpack, in members."),
		intP("set-max-listpack-value", "", H|fUnsigned, 0, longMax, 64, "Longest member of a listpack set."),
		intP("zset-max-listpack-entries", "zset-max-ziplist-entries", H|fUnsigned, 0, longMax, 128, "Largest sorted set kept as a listpack."),
		intP("zset-max-listpack-value", "zset-max-ziplist-value", H|fMemory|fUnsigned, 0, longMax, 64, "Longest member of a listpack sorted set."),
		intP("hll-sparse-max-bytes", "", H|fMemory|fUnsigned, 0, longMax, 3000, "Largest sparse HyperLogLog."),
		// debugging delays of the test suite (hidden): microseconds per key
		// loaded from or saved to an RDB file, a negative -N sleeping 1 µs
		// once in N keys (debugDelay)
		intP("key-load-delay", "", H|fHidden, intMin, intMax, 0, "Microseconds to wait after each key loaded from an RDB file (testing)."),
		intP("rdb-key-save-delay", "", H|fHidden, intMin, intMax, 0, "Microseconds to wait after each key saved to an RDB file (testing)."),
		intP("loading-process-events-interval-bytes", "", H|fHidden, 1024, intMax, 512*kb, "Bytes of the RDB file loaded at start-up between two turns of serving clients (who get LOADING)."),
		intP("stream-node-max-bytes", "", H|fMemory|fUnsigned, 0, longMax, 4096, "Largest stream node in bytes."),
		intP("stream-node-max-entries", "", H, 0, longMax, 100, "Largest stream node in entries."),
		intP("stream-idmp-duration", "", H, 1, 86400, 100, "Seconds a new stream keeps its XADD IDMP records."),
		intP("stream-idmp-maxsize", "", H, 1, 10000, 100, "XADD IDMP records a new stream keeps per producer."),

		// Replication.
		specP("replicaof", "slaveof", H|imm|fMulti, replicaofSpecial, "Master to replicate: host port."),
		strP("masterauth", "", H|fSensitive|fNullable|fNullDefault|fBinary, "", nil, "Password for the master."),
		strP("masteruser", "", H|fSensitive|fNullable|fNullDefault, "", nil, "User name for the master."),
		boolP("replica-read-only", "slave-read-only", H, true, "Replicas refuse writes."),
		boolP("replica-serve-stale-data", "slave-serve-stale-data", H, true, "Replicas answer while out of sync."),
		boolP("replica-ignore-maxmemory", "slave-ignore-maxmemory", 0, true, "Replicas do not evict on their own."),
		boolP("replica-lazy-flush", "slave-lazy-flush", H, false, "Replicas flush asynchronously before a full sync."),
		boolP("replica-announced", "", 0, true, "Replica is listed by Sentinel."),
		boolP("replica-ignore-disk-write-errors", "", 0, false, "Replicas keep going after failing to write to disk."),
		intP("replica-priority", "slave-priority", 0, 0, intMax, 100, "Preference of this replica for promotion."),
		strP("replica-announce-ip", "slave-announce-ip", H|fNullable|fNullDefault, "", nil, "Address this replica reports."),
		intP("replica-announce-port", "slave-announce-port", H, 0, 65535, 0, "Port this replica reports."),
		intP("min-replicas-to-write", "min-slaves-to-write", H, 0, intMax, 0, "Replicas needed for writes to be accepted."),
		intP("min-replicas-max-lag", "min-slaves-max-lag", H, 0, intMax, 10, "Seconds of lag allowed for those replicas."),
		boolP("repl-diskless-sync", "", 0, true, "Send full syncs over the socket."),
		intP("repl-diskless-sync-delay", "", H, 0, intMax, 5, "Seconds to wait for more replicas before a diskless sync."),
		replDisklessLoad(),
		boolP("repl-rdb-channel", "", H|fHidden, true, "Full syncs use a channel of their own for the snapshot while the stream goes on the replication link (Redis 8's rdb channel replication; a master needs repl-diskless-sync yes too)."),
		intP("repl-diskless-sync-max-replicas", "", H, 0, intMax, 0, "Replicas that start a diskless sync at once (0: no limit)."),
		intP("repl-timeout", "", H, 1, intMax, 60, "Replication timeout in seconds."),
		intP("repl-ping-replica-period", "repl-ping-slave-period", H, 1, intMax, 10, "Seconds between pings to replicas."),
		boolP("repl-disable-tcp-nodelay", "", 0, false, "Disable TCP_NODELAY on the replication link."),
		intP("repl-backlog-size", "", H|fMemory, 1, longMax, mb, "Replication backlog size."),
		intP("replica-full-sync-buffer-limit", "", H|fMemory, 0, longMax, 0, "How much of the stream a replica holds in memory while it loads a full sync's snapshot over an RDB channel (0: client-output-buffer-limit replica's hard limit)."),
		intP("repl-backlog-ttl", "", H, 0, longMax, 3600, "Seconds to keep the backlog without replicas."),
		enumP("propagation-error-behavior", "", 0, enumNames("ignore", "panic", "panic-on-replicas"), "ignore", "What to do when a propagated command fails."),

		// Cluster.
		boolP("cluster-enabled", "", H|imm, false, "Run in cluster mode (HotKV: standalone only)."),
	}
}

func enumNames(names ...string) []enumEntry {
	es := make([]enumEntry, len(names))
	for i, n := range names {
		es[i] = enumEntry{n, int64(i)}
	}
	return es
}

func boolP(name, alias string, f pflag, def bool, doc string) paramDef {
	d := paramDef{name: name, alias: alias, kind: KindBool, flags: f, doc: doc}
	if def {
		d.defN = 1
	}
	switch name {
	case "activedefrag":
		d.validN = validActiveDefrag
	}
	return d
}

func intP(name, alias string, f pflag, lo, hi, def int64, doc string) paramDef {
	d := paramDef{name: name, alias: alias, kind: KindInt, flags: f, lo: lo, hi: hi, defN: def, doc: doc}
	if name == "hz" {
		d.clamp = clampHz
	}
	return d
}

func enumP(name, alias string, f pflag, names []enumEntry, def, doc string) paramDef {
	d := paramDef{name: name, alias: alias, kind: KindEnum, flags: f, enum: names, doc: doc, defN: -1}
	for _, e := range names {
		if e.name == def {
			d.defN = e.val
			break
		}
	}
	if d.defN < 0 {
		panic("config: default " + def + " is not a value of " + name)
	}
	return d
}

func strP(name, alias string, f pflag, def string, valid func(string) string, doc string) paramDef {
	return paramDef{name: name, alias: alias, kind: KindString, flags: f, defS: def, validS: valid, doc: doc}
}

func specP(name, alias string, f pflag, sp *special, doc string) paramDef {
	return paramDef{name: name, alias: alias, kind: KindSpecial, flags: f, sp: sp, doc: doc}
}

// clampHz is updateHZ: hz is a hint, so values out of 1..500 are accepted and
// clamped (CONFIG_MIN_HZ, CONFIG_MAX_HZ).
func clampHz(n int64) int64 {
	return min(max(n, 1), 500)
}

// validActiveDefrag is isValidActiveDefrag on a Redis built without its
// jemalloc, which is HotKV's situation.
func validActiveDefrag(n int64) string {
	if n != 0 {
		return "Active defragmentation cannot be enabled: it requires a Redis server compiled " +
			"with a modified Jemalloc like the one shipped by default with the Redis source distribution"
	}
	return ""
}

// validBaseName is isValidDBfilename, isValidAOFfilename and
// isValidAOFdirname: no path separators (pathIsBaseName), and for the AOF
// names not empty either.
func validBaseName(name, what string, nonEmpty bool) func(string) string {
	return func(v string) string {
		if nonEmpty && v == "" {
			return name + " can't be empty"
		}
		if strings.ContainsAny(v, `/\`) {
			return name + " can't be a path, just " + what
		}
		return ""
	}
}

// validShutdownFlags checks shutdown-on-sigint/-sigterm: "default", or a set of
// save|nosave, now and force (Redis's multi-arg enum).
func validShutdownFlags(v string) string {
	words := strings.Fields(v)
	if len(words) == 0 {
		return "argument(s) must be one of the following: default, save, nosave, now, force"
	}
	save, nosave := false, false
	for _, w := range words {
		switch strings.ToLower(w) {
		case "default", "now", "force":
		case "save":
			save = true
		case "nosave":
			nosave = true
		default:
			return "argument(s) must be one of the following: default, save, nosave, now, force"
		}
	}
	if save && nosave { // Redis's isValidShutdownOnSigFlags
		return "shutdown options SAVE and NOSAVE can't be used simultaneously"
	}
	return ""
}

// validProcTitleTemplate checks proc-title-template as Redis's
// validateProcTitleTemplate: the template expands (sdstemplate: {{ is a
// literal brace, every {name} a known variable) to something besides spaces,
// with an empty title.
func validProcTitleTemplate(v string) string {
	const bad = "template format is invalid or contains unknown variables"
	var out strings.Builder
	for p := v; p != ""; {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			out.WriteString(p)
			break
		}
		out.WriteString(p[:i])
		p = p[i+1:]
		if p == "" {
			return bad // premature end
		}
		if p[0] == '{' {
			out.WriteByte('{')
			p = p[1:]
			continue
		}
		j := strings.IndexByte(p, '}')
		if j < 0 {
			return bad
		}
		switch p[:j] {
		case "title", "server-mode", "unixsocket": // empty here: no title, no cluster or sentinel, no socket
		case "listen-addr", "config-file", "port", "tls-port":
			out.WriteString("x") // never empty
		default:
			return bad
		}
		p = p[j+1:]
	}
	if strings.Trim(out.String(), " ") == "" {
		return bad
	}
	return ""
}

// shutdownP is shutdown-on-sigint/-sigterm: Redis's multi-word enum of flags,
// shown in the enum's order (configEnumGetName: "nosave force now" reads back
// as "nosave now force"; no flag is "default").
func shutdownP(name string, valid func(string) string, doc string) paramDef {
	d := strP(name, "", fHonoured|fMulti, "default", valid, doc)
	d.normS = func(v string) string {
		set := map[string]bool{}
		for _, w := range strings.Fields(v) {
			set[strings.ToLower(w)] = true
		}
		var names []string
		for _, n := range []string{"save", "nosave", "now", "force"} {
			if set[n] {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return "default"
		}
		return strings.Join(names, " ")
	}
	return d
}

// replDisklessLoad is repl-diskless-load: how a replica loads a full sync's
// snapshot. disabled: into a file first; on-empty-db: from the link when
// the dataset is empty; flushdb: flush, then from the link;
// swapdb: from the link into empty databases, the old dataset kept aside
// until the new one loaded (put back if the load fails).
func replDisklessLoad() paramDef {
	return enumP("repl-diskless-load", "", fHonoured, enumNames("disabled", "on-empty-db", "swapdb", "flushdb"), "disabled",
		"How a replica loads a full sync's snapshot.")
}
