package keyspace

// EncodingLimits are the thresholds at which a small collection leaves its compact
// encoding (Redis's *-max-listpack-* and set-max-intset-entries parameters). Each
// field reads the live value; the server wires them to its configuration, and
// DefaultEncodingLimits holds Redis's defaults for a keyspace used on its own.
// A collection converts when an insert crosses a limit and never converts back,
// as in Redis (except where Redis itself shrinks, e.g. quicklist to listpack).
type EncodingLimits struct {
	HashMaxListpackEntries func() int64 // hash-max-listpack-entries (512)
	HashMaxListpackValue   func() int64 // hash-max-listpack-value (64)
	ListMaxListpackSize    func() int64 // list-max-listpack-size (-2)
	SetMaxIntsetEntries    func() int64 // set-max-intset-entries (512)
	SetMaxListpackEntries  func() int64 // set-max-listpack-entries (128)
	SetMaxListpackValue    func() int64 // set-max-listpack-value (64)
	ZSetMaxListpackEntries func() int64 // zset-max-listpack-entries (128)
	ZSetMaxListpackValue   func() int64 // zset-max-listpack-value (64)
	HLLSparseMaxBytes      func() int64 // hll-sparse-max-bytes (3000)
	StreamNodeMaxBytes     func() int64 // stream-node-max-bytes (4096)
	StreamNodeMaxEntries   func() int64 // stream-node-max-entries (100)
	StreamIdmpDuration     func() int64 // stream-idmp-duration (100)
	StreamIdmpMaxSize      func() int64 // stream-idmp-maxsize (100)
}

func constant(n int64) func() int64 { return func() int64 { return n } }

// DefaultEncodingLimits returns Redis's default thresholds.
func DefaultEncodingLimits() *EncodingLimits {
	return &EncodingLimits{
		HashMaxListpackEntries: constant(512),
		HashMaxListpackValue:   constant(64),
		ListMaxListpackSize:    constant(-2),
		SetMaxIntsetEntries:    constant(512),
		SetMaxListpackEntries:  constant(128),
		SetMaxListpackValue:    constant(64),
		ZSetMaxListpackEntries: constant(128),
		ZSetMaxListpackValue:   constant(64),
		HLLSparseMaxBytes:      constant(3000),
		StreamNodeMaxBytes:     constant(4096),
		StreamNodeMaxEntries:   constant(100),
		StreamIdmpDuration:     constant(100),
		StreamIdmpMaxSize:      constant(100),
	}
}
