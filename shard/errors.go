package shard

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard/command"
)

// How error texts read, in this package and in every other package of
// the module: "shardis: " starts the text once. A layer that wraps
// another error adds its context words and drops the cause's own
// "shardis: " (internal/errtext writes such texts), so a chain reads
// "shardis: Sentinel discovery: Sentinel shard shard-0: sentinel: no
// usable answer ...", the way os.PathError reads "open /x: permission
// denied". Only the text is shortened: the wrapped errors are unchanged,
// so errors.Is and errors.As match the same sentinel errors and types.

// Sentinel errors. Errors returned by the client wrap one of these (or
// one of the typed errors below) so that callers can use errors.Is.
var (
	// ErrClosed is returned by every call on a closed Client.
	ErrClosed = errors.New("shardis: client closed")
	// ErrConnClosed is returned by every call on a Conn (Client.Conn)
	// after its Close, and by its Err, and by a connection lent to a
	// ForEachShard or ForEachNode callback once the callback returned;
	// the Client itself stays usable.
	ErrConnClosed = errors.New("shardis: connection closed")
	// ErrNodeDown means the node was marked down by health checks and the
	// command failed fast without dialing.
	ErrNodeDown = errors.New("shardis: node is down")
	// ErrUnknownCommand means the command table does not know the command,
	// so the client cannot tell where its keys are. Name a target with
	// DoKey or ForEachShard.
	ErrUnknownCommand = errors.New("shardis: unknown command")
	// ErrNoKey means the command has no key to route by. Name a target with
	// DoKey or ForEachShard.
	ErrNoKey = errors.New("shardis: command has no key to route by")
	// ErrCrossShard is matched (errors.Is) by every *CrossShardError.
	ErrCrossShard = errors.New("shardis: keys are on different shards")
	// ErrNoNodes means the router has no node that could serve the key
	// (for example every shard was ejected). When the shards are out
	// because the health checks keep them down, the error also wraps a
	// *NodeError per shard, matching ErrNodeDown and the failure.
	ErrNoNodes = errors.New("shardis: no node available")
	// ErrBadConfig is wrapped by every configuration error.
	ErrBadConfig = errors.New("shardis: bad config")
	// ErrBadCommand means the command's arguments are malformed (for
	// example an odd number of arguments to MSET).
	ErrBadCommand = errors.New("shardis: bad command")
	// ErrConnState is matched (errors.Is) by every *ConnStateError.
	ErrConnState = errors.New("shardis: command changes the connection's state")
	// ErrNilContext is returned by every call that is given a nil
	// context.Context instead of panicking; pass context.Background() (or
	// context.TODO()) when there is no context to pass.
	ErrNilContext = errors.New("shardis: nil Context")
	// ErrScanIncomplete is matched (errors.Is) by every
	// *ScanIncompleteError.
	ErrScanIncomplete = errors.New("shardis: SCAN cannot prove that every key was reported")
)

// NodeError reports a failure to talk to one node: a dial or I/O error,
// a timeout, or a node marked down. Only the commands routed to that node
// fail with it; every other node keeps serving.
type NodeError struct {
	Node Node  // the node that failed
	Err  error // the cause (ErrNodeDown, a *pool.DialError, an I/O error, ...)
}

// Error implements error.
func (e *NodeError) Error() string {
	cause := "<nil>"
	if e.Err != nil {
		cause = errtext.Nested(e.Err) // a cause of several lines stays under this node
	}
	label := e.Node.Name
	if label == "" || label == e.Node.Addr {
		return fmt.Sprintf("shardis: node %s: %s", e.Node.Addr, cause)
	}
	if strings.HasPrefix(label, e.Node.Addr+" ") {
		// A name that already carries the address ("ADDR (replica)").
		return fmt.Sprintf("shardis: node %s: %s", label, cause)
	}
	return fmt.Sprintf("shardis: node %s (%s): %s", label, e.Node.Addr, cause)
}

// Unwrap returns the cause.
func (e *NodeError) Unwrap() error { return e.Err }

// KeyOwner is one key of a rejected multi-key command and where it lives.
type KeyOwner struct {
	Key   string
	Owner string // the shard label (ring mode) or "slot N" (cluster mode)
}

// CrossShardError reports a multi-key command whose keys live on more than
// one shard (or slot) and which cannot be split without changing its
// meaning. Nothing was sent.
type CrossShardError struct {
	Command string
	Keys    []KeyOwner
}

// Error implements error.
func (e *CrossShardError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "shardis: %s: keys are on different shards:", e.Command)
	for i, k := range e.Keys {
		if i == 8 {
			fmt.Fprintf(&b, " ... (%d keys)", len(e.Keys))
			break
		}
		fmt.Fprintf(&b, " %q->%s", k.Key, k.Owner)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrCrossShard) true.
func (e *CrossShardError) Is(target error) bool { return target == ErrCrossShard }

// ScanIncompleteError ends a cluster-mode Scan (Scanner.Err) that
// reported every key it met but cannot prove it met every key: master
// Node refused (an ACL) every command that tells which slots it holds
// (CLUSTER NODES, then CLUSTER COUNTKEYSINSLOT) or whether a slot left it
// and came back during its walk (CLUSTER NODES, then CLUSTER INFO), so a
// slot that moved to it, or left it and came back, during the Scan could
// not be walked again; or Node, walked already, could not be reached as
// the Scan ended (died, hangs, marked down; no replica promoted yet) or
// did not tell its slots and config epoch then. It comes only once every
// key met was returned by Next. Err is the refusal or the failure. Allowing the client's user CLUSTER NODES
// (or CLUSTER INFO and CLUSTER COUNTKEYSINSLOT) avoids it.
type ScanIncompleteError struct {
	Node Node  // the master that could not tell
	Err  error // the refusal, or why it could not be reached
}

// Error implements error.
func (e *ScanIncompleteError) Error() string {
	return fmt.Sprintf("shardis: SCAN cannot prove that every key was reported: master %s cannot tell its slots or config epoch: %s", e.Node.Addr, errtext.Nested(e.Err))
}

// Is makes errors.Is(err, ErrScanIncomplete) true.
func (e *ScanIncompleteError) Is(target error) bool { return target == ErrScanIncomplete }

// Unwrap returns the refusal or the failure.
func (e *ScanIncompleteError) Unwrap() error { return e.Err }

// ConnStateError reports a command that Do, DoKey and pipelines refuse
// because it would leave the connection it runs on in a state where the
// caller could not use it and no other caller may (subscribe mode,
// MONITOR, a transaction left open, another database, RESP3). Nothing was
// sent. Hint names the tool that does the job.
type ConnStateError struct {
	Command string             // upper case, with the subcommand for CLIENT
	Effect  command.ConnEffect // what the command would do to the connection
	Hint    string
}

// Error implements error.
func (e *ConnStateError) Error() string {
	return fmt.Sprintf("shardis: %s changes the connection's state (%s): %s", e.Command, e.Effect, e.Hint)
}

// Is makes errors.Is(err, ErrConnState) true.
func (e *ConnStateError) Is(target error) bool { return target == ErrConnState }
