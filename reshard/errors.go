package reshard

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// ErrMisplaced is returned (wrapped) by Move and by the callers of Verify
// that treat misplaced keys as a failure, when any key sits on a node that
// does not own it.
var ErrMisplaced = errors.New("shardis: keys on a node that does not own them")

// ErrPauseOver is returned (wrapped) when a batch moved through the mover
// (DUMP/RESTORE) would wait for a reply past the moment the old node's
// writes resume by themselves (Options.Timeout plus a second): its keys
// are left where they are, at the old owner or, for those restored, at
// both (the next move of each settles it, the new owner's copy kept).
var ErrPauseOver = errors.New("shardis: a DUMP/RESTORE batch outlasted the pause of its old node's writes")

// ErrPausedByOther is returned (wrapped in a *shard.NodeError naming the
// old node) when another client (an operator, before a failover) paused
// the old node's writes (CLIENT PAUSE) while a batch moved through the
// mover (DUMP/RESTORE) held its own pause. Redis keeps one pause and
// CLIENT UNPAUSE would end both, so the batch leaves it on (its own part
// ends by itself, Options.Timeout plus a second after it began): the
// batch's keys are restored at the new node and their old copies, which
// cannot be deleted while writes are paused, stay until the next move of
// each key (the mover run again, or a client's move) deletes them, the new
// owner's copy kept. Telling the pauses apart needs INFO commandstats and
// Redis 7.0 or later; without them the batch's CLIENT UNPAUSE ends every
// pause, as before.
var ErrPausedByOther = errors.New("shardis: another client paused the old node's writes during a DUMP/RESTORE batch; the pause is left on and the batch's old copies stay until it ends")

// ErrOldNodeStalled is returned (wrapped in a *shard.NodeError naming
// the old node) when a MIGRATE of large values, waited for a Timeout per
// 64 KiB, brought the new node nothing for longer than a live MIGRATE
// allows (the old node stopped, or its host froze): the mover gives up on
// it after seconds, not hours. The batch's keys are at the old node or,
// those it moved, at the new one; run the mover again once the old node
// answers.
var ErrOldNodeStalled = errors.New("shardis: the old node stopped in the middle of a MIGRATE")

// ErrOldNodeFull is returned (wrapped in a *shard.NodeError naming the
// old node) by Arm and Move when an old node refuses the few bytes they
// write there, the probe's throwaway key and the fence's marker, because
// its memory is over maxmemory and its policy evicts nothing (OOM; a full
// node, the usual reason to add one). SkipProbe does not help: the marker
// is written all the same. Give the node room for the move (raise its
// maxmemory with CONFIG SET maxmemory, or free some memory) and run again.
// An old node that refused the marker "fenced" has no fence; one that
// refused "armed" after the fence went up keeps it "fenced", commands on
// moving keys waiting, until Arm or the mover runs again and completes.
var ErrOldNodeFull = errors.New("shardis: an old node is over its maxmemory and refuses the mover's writes")

// fullErr returns err, a reply of old node n to a write of the mover
// (what), as a *shard.NodeError: one that matches ErrOldNodeFull and
// says what to do when n is out of memory (OOM), else err as it is.
func fullErr(n shard.Node, what string, err error) error {
	var re redis.Error
	if !errors.As(err, &re) || !strings.HasPrefix(string(re), "OOM") {
		return &shard.NodeError{Node: n, Err: fmt.Errorf("%s: %w", what, err)}
	}
	return &shard.NodeError{Node: n, Err: fmt.Errorf("%w: %s: %w; give it room for the move (raise its maxmemory: CONFIG SET maxmemory, or free some memory) and run again", ErrOldNodeFull, what, err)}
}

// ErrMoverRunning is matched (errors.Is) by the *ClientsError with which
// Arm and Move refuse to start while a Move of the opposite migration
// (the one a rollback turns around) still has connections open.
var ErrMoverRunning = errors.New("shardis: a mover of the opposite migration is still running")

// ClientConn is one connection that CheckClients found on an old node.
type ClientConn struct {
	Node   string // the old node's address
	ID     string // CLIENT LIST id
	Addr   string // the client's address as the server sees it
	Name   string // its CLIENT SETNAME name ("" for none)
	Reason string // why it blocks the move
}

// ClientsError reports connections that block a move: processes that
// route by one topology alone, and (unless allowed) connections that no
// shardis process named.
type ClientsError struct {
	Conns []ClientConn
	// Headline says what the connections do ("do not follow the
	// migration protocol" when empty).
	Headline string
	err      error // what else it matches (errors.Is), besides ErrClients
}

// Error implements error.
func (e *ClientsError) Error() string {
	var b strings.Builder
	head := e.Headline
	if head == "" {
		head = "do not follow the migration protocol"
	}
	fmt.Fprintf(&b, "shardis: %d connection(s) %s", len(e.Conns), head)
	for i, c := range e.Conns {
		if i == 10 {
			fmt.Fprintf(&b, "; ... (%d in all)", len(e.Conns))
			break
		}
		name := c.Name
		if name == "" {
			name = "(no name)"
		}
		fmt.Fprintf(&b, "; on %s id=%s addr=%s name=%s: %s", c.Node, c.ID, c.Addr, name, c.Reason)
	}
	return b.String()
}

// ErrClients is matched (errors.Is) by every *ClientsError.
var ErrClients = errors.New("shardis: clients do not follow the migration protocol")

// Is makes errors.Is(err, ErrClients) true, and errors.Is(err,
// ErrStillMigrating) for the refusals of Finish.
func (e *ClientsError) Is(target error) bool {
	return target == ErrClients || e.err != nil && target == e.err
}

// ErrMoverAlreadyRunning is matched (errors.Is) by the *ClientsError with
// which Move and CheckClients refuse to start while another Move of the
// same migration (a second `shardis reshard` of it) has connections open;
// the error names them (node, id, the other mover's address, name).
var ErrMoverAlreadyRunning = errors.New("shardis: another mover of this migration is already running")
