package shard

import (
	"fmt"
	"sync/atomic"

	"github.com/shardis/shardis/shard/command"
)

// call is one command as it goes over the wire to one node: a user's
// command, or one part of a user's multi-key command after splitting.
type call struct {
	name string
	args []any
	info *command.Info
	// whole is, for a part of a caller's multi-key command split over
	// several slots or shards (plan.go's split), the caller's command
	// (its name and description); nil otherwise. The hooks name the
	// part's events after it.
	whole *call

	node  int // index into the client's node table; -1 until routed
	group int // the key's group: node index (ring mode) or hash slot (cluster mode)
	// routeLoc is, for a call routed by the caller's key (DoKey,
	// Pipeline.SendKey), the placement that key was routed by: during a
	// migration the call's own keys move first only when they belong
	// with it (moveFirst).
	routeLoc locator

	// stateful: the command changes its connection's state, which is
	// then closed after use (see connstate.go).
	stateful bool

	// Cluster mode: the state of redirects and retries.
	asking  bool // send ASKING first (after an ASK redirect)
	replica bool // a read-only command served by a replica
	// confirm: the state of the confirmation of a replica's empty
	// answer at the slot's master, and held that answer, given back if
	// the master cannot be reached (cluster_confirm.go).
	confirm uint8
	held    any
	reroute bool // route again by slot before the next attempt
	// old is the cluster a migration moves away from, for a call routed
	// by it while the migration waits (its group is then a node index,
	// not a slot), and oldSlot the slot a redirect of its named, or its
	// key's when its node could not be reached, -1 for none: such a call
	// is routed again by old's table, never by the client's own
	// (routeSlot).
	old     *ClusterRouter
	oldSlot int
	// readOld: the call's last failure asks for old's topology to be
	// read again before it is routed again (refreshOldFor).
	readOld bool
	done    bool // the result is final
	// once: a best-effort query whose caller has an answer without it
	// (heldSlots): a node it cannot reach fails it at once instead of
	// being tried again until MaxRetryWait.
	once   bool
	served bool // answered at the key's old owner during a migration (migrate_read.go)
	// resets counts the resets of this command's write in a row, by a
	// Sentinel shard's master (judgeSentinel) or a cluster node (judge).
	resets    uint8
	redirects int // MOVED/ASK hops so far
	attempts  int // sends after the first

	reply any
	err   error
	last  string // the last redirect or retryable error, for RetryError

	op *Op // the operation of the batch's first call, when hooks observe operations (hooks_exec.go)
	// server is, for a Sentinel shard's call, the address its last
	// attempt's connection was dialed to (a master that may have been
	// replaced since), "" when it was not sent: the hooks' ServerAddr.
	server string

	// cut, for a call planned by a topology a migration's switch may
	// leave (before StartMigration, by the old topology while waiting,
	// or by the new topology before AbortMigration) and for a
	// migration's own forward moves and overwrite DELs that a
	// rollback's switch turns around, is that switch's flag
	// (fenceCut.over): once set, the call is not written, even if it
	// already waited for a connection (migrate_plan.go,
	// migrate_exec.go, migrate_overwrite.go).
	cut *atomic.Bool
}

// Result is the outcome of one command of a pipeline: its reply, or its
// own error. A server error reply is a redis.Error, exactly as redigo
// returns it; a node that could not be reached gives a *NodeError.
type Result struct {
	Reply any
	Err   error
}

// keyString returns the string form of a key argument for error messages.
func keyString(a any) string {
	s, ok := command.Arg(a)
	if !ok {
		return fmt.Sprintf("%v", a)
	}
	return s
}

// lookupCommand finds a command in the generated command table.
func lookupCommand(name string) *command.Info { return command.Lookup(name) }
