package shard

import (
	"context"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/dialedaddr"
)

// Hooks let a program observe what a Client does: every command and every
// node's part of a pipeline with the node that served it, dials, topology
// refreshes, and changes of the nodes' state and of the slot map. Set them
// in Config.Hooks. Every field is optional; a Client without hooks (or
// with only the state callbacks) does no extra work per command.
//
// The hooks are called synchronously on the goroutine doing the work, so
// they must be quick and must not block; they may be called concurrently.
// The events they receive are valid only during the call: copy what must
// be kept. Hooks never see the arguments of a command directly; Statement
// gives them with passwords and other secrets replaced (AUTH, HELLO,
// MIGRATE, ACL SETUSER, CONFIG SET), and the AUTH and HELLO commands that
// connections send while dialing never reach any hook.
//
// A hook that panics does not stop the client, whatever goroutine it ran
// on: the panic is recovered and handed to Panic (see PanicError), and
// the work goes on as if the hook had returned (a Start hook's operation
// keeps its context). A hook may call Client.Close (see Close).
type Hooks struct {
	// Start is called when an operation begins: a Do or DoKey (one
	// command, perhaps split over several nodes), a Pipeline.Exec, or a
	// Client.Tx (the whole transaction, every attempt and fn included,
	// is one operation named "MULTI"; see Op), a command sent on a
	// connection a ForEachShard function was lent (see ForEachShard), or
	// a command a Scanner sends (each SCAN page, named "SCAN"). The
	// context it returns is the one the operation runs with and the one
	// its later hooks (Command, Pipeline, Finish) receive: a tracer puts
	// its span there. It must derive from ctx (keep its deadline and
	// cancellation). Nil means ctx is used unchanged. During a
	// migration it runs outside the fence's count (docs/resharding.md,
	// "The fence"): a slow Start holds neither the switch nor a
	// rollback's, and an operation whose plan it outlasted is planned
	// again.
	Start func(ctx context.Context, op *Op) context.Context
	// Finish is called once every command of the operation has its final
	// result, after every redirect and retry.
	Finish func(ctx context.Context, op *Op)
	// Command is called for each attempt of a command on a node when the
	// command went to that node alone: a redirected command reports the
	// node that redirected it (OutcomeRedirect) and then the one that
	// answered. During a migration it also reports what the client sends
	// on the way to the caller's command (a MIGRATE, the DEL after a
	// blind overwrite) with the node it went to. In a Client.Tx it
	// reports each WATCH and Tx.Do, on the transaction's node; for a
	// Conn's transaction, each command sent alone on its connection.
	// The attempts of a command planned by a migration's old topology
	// while its fence may go up, or by the new topology of a migration
	// that a rollback may turn around, are reported once the command has
	// its result (see docs/resharding.md, "The fence"), so that the
	// switch does not wait for the hook; the same holds for Pipeline.
	Command func(ctx context.Context, ev *CommandEvent)
	// Pipeline is called for each node's part of a batch when the node
	// received more than one command at once (a pipeline, or the parts of
	// a split multi-key command, a read's MULTI/EXISTS/command/EXEC at
	// its old owner during a migration), once per attempt; a
	// Client.Tx's MULTI, queued commands and EXEC are one such batch
	// (see PipelineEvent), and so are the commands of a Conn's
	// transaction sent at once (see Client.Conn).
	Pipeline func(ctx context.Context, ev *PipelineEvent)
	// Dial is called after every attempt to open a connection.
	Dial func(ctx context.Context, ev *DialEvent)
	// Refresh is called after every cluster topology refresh.
	Refresh func(ctx context.Context, ev *RefreshEvent)
	// NodeState is called when a node is marked down or up again, ejected
	// from or restored to the ring (HealthOptions.AutoEject), or when a
	// replica is seen promoted to master. Events come in the order the
	// client saw them.
	NodeState func(ev NodeEvent)
	// SlotMap is called when the cluster slot map the client routes by
	// changes (after a refresh, or at once for a MOVED), with a summary of
	// what moved. Not called for the first map. Each event is the change
	// from the map the event before ended at to the map in use when it
	// is reported, and events come one at a time, in that order: applied
	// in the order they come, they end at the map the client routes by.
	// Changes made close together (a MOVED applied while a refresh
	// installs its answer) may come as one event, and a change undone
	// before it was reported (a slot moved and moved back) not at all.
	SlotMap func(ev SlotMapEvent)
	// Panic is called with a panic that the client recovered from code it
	// ran for the program, when no call was there to return it to: a
	// hook's, a Router's Nodes', a HealthCheck's (see PanicError). It runs
	// on the goroutine that recovered the panic. Nil means the standard
	// logger prints the panic and its stack (log.Printf).
	Panic func(err *PanicError)
}

// Outcome classifies how a command attempt (or an operation) ended.
type Outcome uint8

// The outcomes.
const (
	// OutcomeOK: a reply that is not an error.
	OutcomeOK Outcome = iota
	// OutcomeServerError: the server's error reply, which stands (a wrong
	// type, a script error, NOAUTH, ...), and a transaction's EXEC that
	// did not run it because a watched key changed (ErrTxAborted): the
	// server's answer, which the client does not retry.
	OutcomeServerError
	// OutcomeRedirect: a MOVED, ASK or TRYAGAIN reply, which the client
	// follows (CommandEvent.Redirect says where to).
	OutcomeRedirect
	// OutcomeRetry: a failure the client tries again after a pause (in
	// cluster mode, and on Sentinel shards while it waits for a new
	// master): a refused connection or a node marked down (nothing was
	// sent), a cluster that is down or loading, a master that was
	// demoted, a read whose connection failed. As an operation's outcome:
	// the client gave up retrying (a *RetryError).
	OutcomeRetry
	// OutcomeUnknown: a write whose connection failed after it was sent,
	// or whose reply did not come within the read timeout: it may or may
	// not have run, so it is not sent again (the caller gets an
	// *UnknownOutcomeError). Also a blocking write (BLPOP) that Close cut
	// off while it waited for its reply, in its Command or Pipeline event
	// and in its operation's Outcome alike (a ForEachShard function's
	// command too): the caller's error wraps ErrClosed and says it may
	// have run; a blocking read cut off so is OutcomeFailed.
	OutcomeUnknown
	// OutcomeTimeout: a deadline ended the wait: the context's, or the
	// read timeout of a command that does not write.
	OutcomeTimeout
	// OutcomeCanceled: the caller's context was cancelled.
	OutcomeCanceled
	// OutcomeFailed: any other failure that stands: a read's connection
	// failure in ring mode, a node marked down, a command refused before sending
	// (a cross-shard command, an unknown command), a closed client.
	OutcomeFailed

	numOutcomes = int(OutcomeFailed) + 1
)

var outcomeNames = [numOutcomes]string{"ok", "server_error", "redirect", "retry", "unknown_outcome", "timeout", "canceled", "failed"}

// String returns the outcome's name: "ok", "server_error", "redirect",
// "retry", "unknown_outcome", "timeout", "canceled" or "failed". The names
// are fit for metric labels.
func (o Outcome) String() string {
	if int(o) < numOutcomes {
		return outcomeNames[o]
	}
	return "outcome(" + itoa(int(o)) + ")"
}

// IsError reports whether the outcome is anything but OutcomeOK.
func (o Outcome) IsError() bool { return o != OutcomeOK }

// Redirect describes a MOVED, ASK or TRYAGAIN reply that the client
// followed.
type Redirect struct {
	// Kind is "MOVED", "ASK" or "TRYAGAIN".
	Kind string
	// Slot is the hash slot; -1 when the reply does not say (TRYAGAIN).
	Slot int
	// From is the node that answered with the redirect.
	From Node
	// To is the node the command goes to next; for TRYAGAIN, the slot's
	// node once the client has looked again (often From).
	To Node
}

// Op is one operation: a Do or DoKey, a Pipeline.Exec, or a Client.Tx
// (and what a Conn sends, see Client.Conn).
// The fields above Duration are set when it starts (but a transaction's
// Commands); the others when it finishes. The same *Op goes to Start and
// Finish; it is recycled once Finish returns.
//
// A Client.Tx is named "MULTI" (Name and Operation, as OpenTelemetry's
// database conventions name an operation by its Redis command: tracers
// make it a span "MULTI") and is not a Pipeline. Its Attempts is how many
// times the transaction ran (fn included: it runs again after a redirect
// in cluster mode), Node the node of the last attempt, and Outcome, as
// for any operation, that of the error Tx returns; ErrTxAborted, a
// watched key that changed, is OutcomeServerError.
type Op struct {
	// Name is the command's name as the caller spelled it, "PIPELINE",
	// or "MULTI" for a Client.Tx.
	Name string
	// Pipeline is true for a Pipeline.Exec (false for a Client.Tx).
	Pipeline bool
	// Commands is the number of commands (1 for a Do); for a Client.Tx,
	// set when it finishes: the commands its last attempt queued between
	// MULTI and EXEC.
	Commands int
	// Start is when the operation began.
	Start time.Time

	// Duration is the time from Start until every result was final. It
	// includes what came before the first attempt was sent, which no
	// attempt's Duration does: during a migration, the wait of a command
	// whose key moves for the fence to be armed, and the moves of its
	// keys (see CommandEvent.Start).
	Duration time.Duration
	// Node is the node that gave the final reply when the operation ended
	// on one node; the zero Node otherwise (see Nodes).
	Node Node
	// ServerAddr is the host:port of Node's server (see
	// CommandEvent.ServerAddr); empty with the zero Node.
	ServerAddr string
	// Nodes is the number of distinct nodes that gave the final replies.
	Nodes int
	// Outcome classifies the result: for a pipeline, the first command
	// that did not succeed decides.
	Outcome Outcome
	// Err is the command's error (for a pipeline, the first command's
	// error), nil on success.
	Err error
	// Failed is the number of commands whose result is an error.
	Failed int
	// Attempts is the most times one command was sent (1 without
	// redirects or retries).
	Attempts int

	name      string
	operation string // Operation's answer, decided at the start
	tx        bool   // a Client.Tx: calls are WATCH's, then MULTI ... EXEC's
	args      []any
	calls     []*call
	// The first batch of the operation takes its start time from Start,
	// and the operation its end from that batch when there was no other:
	// the clock is read twice per operation, not four times.
	passed bool
	// side: the client sent something on the operation's way before its
	// first batch (a migration's MIGRATE, a read at the old owner): the
	// batch's start is its own, not Start.
	side    bool
	end     time.Time
	scratch *passScratch // the first batch's bookkeeping, kept with the recycled Op
}

// Keys returns the number of keys the operation's commands name.
func (op *Op) Keys() int { return keysOf(op.calls) }

// Statement returns the operation's commands as text, at most max bytes
// (0 or less: no limit), with secrets replaced by "?" (see Hooks). A
// pipeline's commands are separated by newlines. A transaction's are its
// WATCH and, once it finished, its last attempt's MULTI, queued commands
// and EXEC.
func (op *Op) Statement(max int) string {
	if !op.Pipeline && !op.tx {
		return statement(op.name, op.args, max)
	}
	return pipelineStatement(op.calls, max)
}

// CommandEvent is one attempt of one command on one node.
type CommandEvent struct {
	// Node is the node the command was sent to.
	Node Node
	// ServerAddr is the host:port of the server the command was sent to:
	// Node.Addr, but for a Sentinel shard, whose Node.Addr names the
	// shard ("sentinel/<name>", see Client.NodeAddr), the master its
	// connection was dialed to, also when a failover has replaced that
	// master by the time the event is reported; for an attempt that got
	// no connection, the shard's master when the event is reported
	// (empty while it has none). Tracers give it as the server's address
	// (OpenTelemetry's server.address and server.port).
	ServerAddr string
	// Name is the command's name as the caller spelled it; for a part
	// of a split multi-key command, that of the part sent (a one-key
	// part of an MGET is sent as GET), which Operation does not use: it
	// names the caller's command.
	Name string
	// Outcome classifies the attempt.
	Outcome Outcome
	// Redirect is set when Outcome is OutcomeRedirect.
	Redirect Redirect
	// Err is the attempt's error (nil with OutcomeOK).
	Err error
	// Attempt counts the sends of this command before this one (0 for the
	// first).
	Attempt int
	// Start is when the attempt's batch was sent; Duration is how long its
	// round trip took (see PipelineEvent for batches on several nodes).
	// The first attempt's Start may come after Op.Start: the gap is what
	// the operation waited before sending (see Op.Duration).
	Start    time.Time
	Duration time.Duration

	cl *call
	// operation is, for a part of a caller's split command, the name
	// Operation gives (the caller's command's); "" otherwise.
	operation string
}

// Keys returns the number of keys the command names.
func (ev *CommandEvent) Keys() int { return keysOf([]*call{ev.cl}) }

// Part reports whether the command is a node's share of a caller's
// multi-key command that the client split over several slots or shards
// (an MGET's one-key part, sent as GET): the node got that one command
// of it, where a node that got several has a PipelineEvent. Tracers give
// such an attempt a span of its own, as they give a PipelineEvent, so
// that every node the command reached is named.
func (ev *CommandEvent) Part() bool { return ev.operation != "" }

// Statement returns the command as text, at most max bytes (0 or less: no
// limit), with secrets replaced by "?".
func (ev *CommandEvent) Statement(max int) string {
	if ev.cl == nil { // a copy kept after the hook returned
		return statement(ev.Name, nil, max)
	}
	return statement(ev.Name, ev.cl.args, max)
}

// PipelineEvent is one node's part of a batch (a pipeline, or the parts of
// a split multi-key command, which Operation names after the command),
// one attempt; or the MULTI ... EXEC of one
// attempt of a Client.Tx (at a slot's importing node sent after ASKING,
// which, as in a pipeline's part and in Stats, is not one of Commands). A
// queued command's outcome is that of its QUEUED reply (the errors in
// EXEC's reply are the caller's to read); EXEC's is OutcomeServerError
// with ErrTxAborted when a watched key changed.
type PipelineEvent struct {
	// Node is the node the part was sent to.
	Node Node
	// ServerAddr is the host:port of Node's server (see
	// CommandEvent.ServerAddr).
	ServerAddr string
	// Commands is the number of commands in the part.
	Commands int
	// Outcomes counts the commands by outcome, indexed by Outcome.
	Outcomes [numOutcomes]int
	// Outcome is that of the first command that did not succeed, or
	// OutcomeOK.
	Outcome Outcome
	// Err is the first command's error, nil if none.
	Err error
	// Redirects lists the redirects among the part's replies.
	Redirects []Redirect
	// Attempt counts the sends before this one of the part's commands (the
	// most of them).
	Attempt int
	// Start is when the batch was sent. Duration is the batch's round
	// trip: every node's part of a batch is written before any reply is
	// read, so the parts of one batch share it.
	Start    time.Time
	Duration time.Duration

	calls []*call
	tx    bool // the MULTI ... EXEC batch of a transaction
	// operation is, for a part made only of the parts of one caller's
	// split command, that command's operation name; "" otherwise.
	operation string
}

// Keys returns the number of keys the part's commands name.
func (ev *PipelineEvent) Keys() int { return keysOf(ev.calls) }

// Operation returns the part's name fit for a metric label or a span
// name: "MULTI" for the MULTI ... EXEC batch of a transaction (a
// Client.Tx, or one run through a Conn), as Op.Operation names the
// transaction itself; the caller's command's operation name (as
// CommandEvent.Operation gives it, "MGET" for instance) for a part made
// only of the parts of one multi-key command split over several slots
// (the caller issued one MGET, MSET, DEL, EXISTS, UNLINK or TOUCH, not a
// pipeline), also within a pipeline; and "PIPELINE" for any other part.
func (ev *PipelineEvent) Operation() string {
	if ev.tx {
		return "MULTI"
	}
	if ev.operation != "" {
		return ev.operation
	}
	return "PIPELINE"
}

// Statement returns the part's commands as text, separated by newlines,
// at most max bytes (0 or less: no limit), with secrets replaced by "?".
func (ev *PipelineEvent) Statement(max int) string { return pipelineStatement(ev.calls, max) }

// DialEvent is one attempt to open a connection.
type DialEvent struct {
	// Node is the node dialed (Name is its address).
	Node Node
	// ReadOnly is set for a replica connection that sends READONLY.
	ReadOnly bool
	// Duration covers connect, TLS handshake and setup commands.
	Duration time.Duration
	// Err is nil when the connection was opened.
	Err error
}

// RefreshEvent is one cluster topology refresh.
type RefreshEvent struct {
	// Start is when the refresh began; Duration how long it took.
	Start    time.Time
	Duration time.Duration
	// Changed is true when the refresh installed the topology it read,
	// which differed from the one in use (its slot map, or its nodes).
	// A slot that a MOVED reply moved while the refresh ran (reported
	// to the SlotMap hook on its own) does not make it true.
	Changed bool
	// Err is the refresh's error; the old map stays in use then.
	Err error
	// OtherCluster is the number of nodes this refresh asked that
	// answered for another cluster (see Stats.OtherCluster; another
	// refresh running meanwhile counts its own). Their answers were
	// refused, and the refresh may have succeeded all the same, with
	// another node's answer, unless SwitchedCluster is set.
	OtherCluster int
	// SwitchedCluster is true when this refresh took one of those
	// answers, from a seed, because no node of the cluster in use
	// answered: the client now follows that other cluster (see
	// Stats.ClusterSwitches).
	SwitchedCluster bool
}

// itoa formats a small int without fmt.
func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	n := len(b)
	neg := i < 0
	if neg {
		i = -i
	}
	for i > 0 {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		n--
		b[n] = '-'
	}
	return string(b[n:])
}

// sentServerAddr is the ServerAddr of an event of cl's last attempt on
// node n: the address its connection was dialed to when known (a
// Sentinel shard's master then, which a failover may have replaced
// since), else serverAddr's.
func (c *Client) sentServerAddr(n Node, cl *call) string {
	if cl != nil && cl.server != "" {
		return cl.server
	}
	return c.serverAddr(n)
}

// dialedServer is, for a connection conn to a Sentinel shard's node n,
// the address conn was dialed to (the master then), for the hooks'
// ServerAddr; "" for any other node, whose address is the server's.
func (c *Client) dialedServer(n Node, conn redis.Conn) string {
	if c.sent == nil || conn == nil || !strings.HasPrefix(n.Addr, sentinelPrefix) {
		return ""
	}
	return dialedaddr.Of(conn)
}

// serverAddr is the ServerAddr of the hooks' events for node n: its
// address, or a Sentinel shard's master's now ("" while it has none).
func (c *Client) serverAddr(n Node) string {
	if c.sent == nil || !strings.HasPrefix(n.Addr, sentinelPrefix) {
		return n.Addr
	}
	a, err := c.NodeAddr(n)
	if err != nil {
		return ""
	}
	return a
}
