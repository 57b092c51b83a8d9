package reshard

import (
	"time"

	"github.com/shardis/shardis/shard"
)

// Options configures Move.
type Options struct {
	// From is the topology keys move away from; To is the one they move to
	// (a ring, a cluster or a Router). Connections use To's pool options
	// (credentials, TLS, database) for every node: a From that gives other
	// credentials, or asks for TLS that To does not, is refused
	// (shard.ErrBadConfig) rather than ignored.
	From, To shard.Config
	// Addrs maps a node address as the mover dials it to the address the
	// old nodes reach it at (MIGRATE connects from server to server).
	// Arming's probe of MIGRATE (see Arm) uses it too. When it is nil, To's
	// Migration.Addrs, which the processes use, serves for both.
	Addrs map[string]string

	// KeysPerSecond and BytesPerSecond limit the pace (0: no limit), so
	// that production traffic keeps its latency. Bytes are measured with
	// MEMORY USAGE, one more command per moving key (pipelined, one round
	// trip per SCAN page), which also bounds how long the mover waits for a
	// MIGRATE (see Timeout); it samples a few elements of an aggregate
	// (its default), so that its cost does not grow with the value, and
	// so estimates the size of an aggregate whose elements differ in size.
	KeysPerSecond  float64
	BytesPerSecond float64
	// Batch is the most keys one MIGRATE carries (0: 512). The old node
	// serves nothing else while it runs one: lower it for large values.
	Batch int
	// MaxBlock is how long one MIGRATE should hold the old node, which
	// serves nothing else meanwhile (0: 10ms): the batch shrinks when a
	// MIGRATE takes longer (large values) and grows back to Batch when it
	// takes much less (small ones).
	MaxBlock time.Duration
	// ScanCount is the COUNT hint of each SCAN (0: 1000).
	ScanCount int
	// Timeout bounds each MIGRATE's I/O between the servers (0: 10s):
	// its connection, each write of up to 64 KiB of its payload, each
	// answer it reads. The mover waits for a MIGRATE's reply Timeout
	// twice, plus once per 64 KiB of the batch's bytes, plus a second.
	Timeout time.Duration

	// DryRun counts the keys and bytes that would move, between which
	// nodes, and moves nothing.
	DryRun bool
	// Dump moves keys with DUMP, PTTL and RESTORE through the mover
	// instead of MIGRATE (for old nodes that cannot reach the new ones).
	// MIGRATE failing with an I/O error switches a batch to it too.
	Dump bool
	// SkipClientCheck starts without checking CLIENT LIST (see
	// CheckClients); AllowUnnamed starts even when some connections cannot
	// be attributed to a shardis process.
	SkipClientCheck bool
	AllowUnnamed    bool
	// SkipProbe arms without first checking that every old node can
	// MIGRATE to the new nodes as the processes will (see Arm).
	SkipProbe bool
	// SkipVerify skips the verification pass that ends Move.
	SkipVerify bool
	// Finish ends the migration after a clean verification when no
	// process uses it any more (see Finish): the fence's markers are
	// deleted and Report.Finished is set. While processes still route by
	// the migration, the markers stay and Report.Remaining names their
	// connections; that is not an error. A process that joins while the
	// markers are being deleted has them put back (armed), and is named
	// the same way; when putting them back fails, Move returns that
	// error: no fence is up then.
	Finish bool

	// Progress, when set, is called about every 200ms and once at the end.
	Progress func(Progress)
}

func (o Options) withDefaults() Options {
	if o.Batch <= 0 {
		o.Batch = 512
	}
	if o.MaxBlock <= 0 {
		o.MaxBlock = 10 * time.Millisecond
	}
	if o.ScanCount <= 0 {
		o.ScanCount = 1000
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	return o
}

// Progress is a snapshot of a running Move.
type Progress struct {
	Total   int64 // keys on the old nodes when the move began (DBSIZE)
	Scanned int64 // keys looked at so far (as Report.Scanned)
	Moved   int64 // keys moved (or, in a dry run, that would move)
	Bytes   int64 // bytes moved (MEMORY USAGE, sampled; 0 where the old node refuses MEMORY USAGE)
	// KeysPerSecond is the scan's rate over its last 10 s (in the last
	// report, Done, over the whole scan), counted from when it began,
	// after the fence was armed; ETA is the time the keys left take at
	// that rate, 0 while it is not known: before any key has moved while
	// the scan has run less than a second (its first instants count the
	// keys that stay at once), and in the last report.
	KeysPerSecond float64
	// MovedPerSecond and BytesPerSecond are the keys and bytes moved per
	// second over the same span as KeysPerSecond: the pace the move
	// keeps, which Options.KeysPerSecond and Options.BytesPerSecond
	// bound. Moved and Bytes over Elapsed would count the wait for the
	// fence and read below it.
	MovedPerSecond float64
	BytesPerSecond float64
	ETA            time.Duration
	Elapsed        time.Duration
	Done           bool
}

// Flow counts the keys that move from one node to another.
type Flow struct {
	From, To string // node addresses
	Keys     int64
	Bytes    int64 // MEMORY USAGE, sampled (0 where the old node refuses it)
}

// Report is the outcome of Move.
type Report struct {
	// Scanned counts the keys looked at on the old nodes. A key SCAN
	// returns twice on consecutive pages counts once; one that comes back
	// from further back (a node emptied of nearly every key between two
	// pages) counts again, and so may a dry run's moving keys, which stay
	// where they are: the figures can run over, the moves cannot (a key
	// is moved without REPLACE and a newer copy at its owner is kept).
	Scanned int64
	// Moved counts the keys the mover moved (would move, in a dry run).
	// A key the new owner already had is not among them, nor a key gone
	// from the old node when its batch moved (deleted, expired, or moved
	// by a client that touched it first: that client counts it): each
	// batch's MIGRATE runs in a transaction between two EXISTS of its
	// keys. A batch that fails midway counts the keys it moved before
	// (Move then returns the error with the report); a key the new owner
	// holds with the very value the mover dumped counts as moved.
	Moved int64
	// Busy counts keys that the new owner already had with another
	// value: the new owner's copy was kept and the mover deleted the old
	// one (a delete that failed fails the move instead, and one that
	// found the old copy gone is not counted). A copy with the very value
	// of the old one (equal DUMPs), which a failed earlier move of the
	// mover leaves, counts as moved.
	Busy  int64
	Bytes int64
	// Strays counts keys found on an old node that owns them in neither
	// topology; they are left where they are (see Verify).
	Strays int64
	Flows  []Flow // per (old node, new node), in address order
	// Rescans counts the passes the mover made after its closing
	// verification found keys it moves left on old nodes (a slot of an
	// old cluster moved, by its operator, to a master already scanned or
	// not listed): each scans those nodes again, moves what it finds by
	// the same rules (a newer copy at the new owner is kept) and verifies
	// again, at most 3 times, and no more after one that moved nothing.
	// Verify is the last verification.
	Rescans int
	// RescanMoved counts the keys those passes moved (part of Moved).
	RescanMoved int64
	Elapsed     time.Duration
	// Verify is the closing verification pass (nil when skipped or in a
	// dry run).
	Verify *VerifyReport
	// Finished reports that Options.Finish deleted the fence's markers.
	Finished bool
	// Remaining names, when Options.Finish was set but the markers had
	// to stay, the connections of processes that still use the migration.
	Remaining []ClientConn
}
