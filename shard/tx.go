package shard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard/command"
)

// ErrTxAborted means EXEC did not run the transaction because a watched
// key changed. Run the transaction again if that is what you want.
var ErrTxAborted = errors.New("shardis: transaction aborted: a watched key changed")

// ErrTxDone is the error of a Tx's Do and Queue once the function passed
// to Client.Tx has returned: the transaction was sent (or abandoned), and
// a command given to it then would never run.
var ErrTxDone = errors.New("shardis: transaction used after its function returned")

// ErrTxNotRetried wraps the failure of a transaction that Client.Tx would
// have run again (a redirect or a refusal before EXEC that nothing of
// MULTI ... EXEC ran: MOVED, ASK, TRYAGAIN, CLUSTERDOWN, READONLY, a new
// master on a Sentinel shard, ...) but did not, because its function had
// sent a command through Tx.Do that may write: that command ran at once,
// outside MULTI, and running the function again would run it twice. The
// error also wraps the failure itself (a redis.Error, a *NodeError).
var ErrTxNotRetried = errors.New("shardis: transaction not run again: its function wrote through Tx.Do")

// ErrWatchLost is matched (errors.Is) by the refusal of a Conn's
// MULTI ... EXEC, and of the commands queued in it, when the connection
// that held the Conn's WATCH was lost before MULTI was sent: the server
// closed it (CLIENT KILL, its client timeout, a restart), or a command on
// it failed. Nothing of the transaction was sent, and the keys are no
// longer watched: WATCH them again (and read them again) before the next
// MULTI. A Conn never runs anything again by itself.
var ErrWatchLost = errors.New("shardis: transaction refused: the watched keys are no longer watched")

// Tx is one attempt of a transaction: commands sent with Do run at once on
// the transaction's connection (reads under WATCH); commands queued with
// Queue run atomically between MULTI and EXEC. A Tx is valid only inside
// the function passed to Client.Tx: afterwards Do and Queue fail with
// ErrTxDone. Queue may be called from several goroutines at once; Do, like
// a redigo connection, is for one goroutine at a time.
type Tx struct {
	c      *Client
	ctx    context.Context
	conn   *trackedConn
	loc    locator
	group  int
	asking bool // at a slot's importing node: ASKING before each command
	node   int
	fence  txPlan   // planned by a migration's old topology: each round trip is counted (migrate_plan.go)
	keys   []any    // the WATCHed keys: auto-eject may move them (ring_view.go)
	th     *txHooks // what the hooks see of the transaction; nil without hooks (hooks_tx.go)

	mu     sync.Mutex
	queued []queued
	done   bool // fn returned: Do and Queue fail with ErrTxDone
	// wrote: fn sent a command through Do that may write (it ran at
	// once, outside MULTI): the attempt is never run again (txEnd).
	wrote bool
	// lost is the first write sent through Do whose connection failed
	// after it was sent whole: it may have run. The attempt's failure
	// wraps it (txOnce), even when fn ignored it.
	lost *UnknownOutcomeError
	// closed is the first error of a command of fn's that found the
	// connection closed by the server (closedByServer), or closing (a
	// demoted master's UNBLOCKED: noteClosing): that command did not
	// run, or was a read (a write's is lost, and wrote is set).
	closed error
	// refused is the first error reply of a command of fn's that the
	// node refused before running it (refusedUnrun: READONLY,
	// MASTERDOWN, LOADING, ...): returned by fn, it ends an attempt of
	// which nothing ran (txOnce).
	refused error
}

// closedRead returns the error of fn's command that found the
// connection closed by the server, or nil.
func (tx *Tx) closedRead() error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.closed
}

// errTxConnClosed says that the server closed a transaction's connection
// before MULTI was sent: nothing of MULTI ... EXEC ran.
var errTxConnClosed = errors.New("shardis: the server closed the transaction's connection before MULTI was sent (the transaction did not run)")

// serverClosed reports whether err is the failure of a connection that
// the server closed: the end of the stream, or a reset.
func serverClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// isDone reports whether fn has returned.
func (tx *Tx) isDone() bool {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.done
}

// end marks the Tx done and returns the commands queued.
func (tx *Tx) end() []queued {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	tx.done = true
	return tx.queued
}

// lostWrite returns the first write fn sent through Do whose outcome is
// unknown (lost), or nil.
func (tx *Tx) lostWrite() *UnknownOutcomeError {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.lost
}

// hasWritten reports whether fn sent a command through Do that may write.
func (tx *Tx) hasWritten() bool {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.wrote
}

// txEnd says how an attempt of a transaction that failed ended, for the
// retries on a Sentinel shard (retrySentinelTx): only an attempt of which
// nothing can have run is run again. It leaves out the writes fn sent
// through Do, which txOnce reports apart (wrote): with one, no attempt is
// run again (ErrTxNotRetried).
type txEnd uint8

const (
	// txMayHaveRun: something of the attempt may have run (EXEC's
	// connection failed after it was written, fn failed), or its failure
	// is no failover's (ErrTxAborted, a protocol error). It is never run
	// again.
	txMayHaveRun txEnd = iota
	// txNotRun: nothing but WATCH and fn's commands reached the server, or
	// EXEC was refused with an error reply (EXECABORT after a queued
	// command's refusal, or READONLY ...), which runs nothing.
	txNotRun
	// txNotWritten: the write of MULTI ... EXEC failed before its end:
	// the server never read a whole EXEC, and ran nothing of it.
	txNotWritten
)

// Do runs one command now on the transaction's node. Its keys must be in
// the transaction's slot (cluster mode) or on its shard (ring mode).
// MULTI, EXEC and DISCARD are refused (Tx sends them), and so are, with a
// *ConnStateError, the commands after which the connection no longer
// answers as the transaction needs (SUBSCRIBE and the like, MONITOR,
// CLIENT REPLY OFF|SKIP, HELLO 3, RESET, QUIT), in Do as in Queue, and so
// is SELECT of another database than the client's (Pool.DB); another
// command that changes the connection's state (CLIENT SETNAME, ...) gets
// the connection closed when the transaction ends instead of pooled.
//
// A command that may write runs at once, outside the transaction's MULTI:
// once one has run, Client.Tx never runs fn again (ErrTxNotRetried). One
// that changes no data (PING, ECHO, TIME, CLIENT ID, ...) does not count,
// though it is not flagged read-only; EVAL, FCALL, PUBLISH, an
// administrative or unknown command do.
func (tx *Tx) Do(name string, args ...any) (any, error) {
	if tx.isDone() {
		return nil, ErrTxDone
	}
	if err := tx.check(name, args); err != nil {
		return nil, err
	}
	if err := tx.c.moveCommandKeys(tx.ctx, tx.node, name, args); err != nil { // migrate_tx.go
		return nil, err
	}
	if !mayWrite(command.Lookup(name).Resolve(args)) { // CLIENT ID writes nothing, CLIENT KILL may
		return tx.do(name, false, args...)
	}
	// Marked before the write is sent (its outcome may never be known),
	// and unmarked when the node refused it before running it (tx.do).
	tx.mu.Lock()
	wrote := tx.wrote
	tx.wrote = true
	tx.mu.Unlock()
	reply, err := tx.do(name, !wrote, args...)
	if uo := (*UnknownOutcomeError)(nil); errors.As(err, &uo) {
		tx.mu.Lock()
		if tx.lost == nil {
			tx.lost = uo
		}
		tx.mu.Unlock()
	}
	return reply, err
}

// unmarkWrite is for a write that Tx.Do marked first (the first of fn's)
// and that did not run: it was not sent (unsentError), the node refused
// it before running it (refusedUnrun), or its write failed before its
// end, so that the node never read it whole (a *NodeError of a failed
// write: send). fn has written nothing.
func (tx *Tx) unmarkWrite(first bool, name string, err error) {
	var (
		un unsentError
		ne *NodeError
	)
	if first && (refusedUnrun(name, err) || errors.As(err, &un) || errors.As(err, &ne) && writeFailed(ne.Err)) {
		tx.mu.Lock()
		tx.wrote = false
		tx.mu.Unlock()
	}
}

// refusedUnrun reports whether err, the error of the command name sent
// through Tx.Do, is a refusal that Redis gives before it runs a command:
// the command changed nothing.
//
// MOVED, ASK, TRYAGAIN and CLUSTERDOWN come only from the cluster's check
// of a command's keys before it runs, for any command: a script's or a
// module's inner call that reaches a key elsewhere, or a cluster that is
// down, gets an ERR reply, which ends the script or the module's command
// after some of its writes may have run. A protocol error is the server's
// refusal to read the command at all. The other refusals (READONLY,
// LOADING, MASTERDOWN, NOREPLICAS, OOM, NOPERM, MISCONF, BUSY) count only
// for a command of Redis's own table: a script's or function's error
// reply, and a module command's, may carry them from an inner call made
// after some of its writes ran (a module's RedisModule_Call in script mode
// gets READONLY, NOREPLICAS, MISCONF or OOM so). So does a demoted
// master's UNBLOCKED of a blocked command of Redis's own
// (unblockedByDemotion): the command ended unrun.
func refusedUnrun(name string, err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	switch cluster.ErrorCode(string(re)) {
	case "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN":
		return true
	}
	if runsScript(lowerName(name)) {
		return false
	}
	if isProtocolError(re) {
		return true
	}
	switch cluster.ErrorCode(string(re)) {
	case "READONLY", "LOADING", "MASTERDOWN", "NOREPLICAS", "OOM", "NOPERM", "MISCONF", "BUSY":
		// A replica, a loading node, a replica cut from its master,
		// too few replicas, over maxmemory, an ACL refusal, writes
		// stopped by a failed save, a script still running: Redis
		// checks them before it runs a command, and no command of its
		// own replies so later.
		return command.Lookup(name) != nil
	case "UNBLOCKED":
		// A demoted master's end of a blocked BLPOP, XREAD BLOCK, ...:
		// it popped, moved or read nothing.
		return unblockedByDemotion(command.Lookup(name), string(re))
	}
	return false
}

// lostWriteError is the failure err of an attempt of a transaction whose
// function had sent through Tx.Do the write lost, whose outcome is
// unknown: it wraps both, so that the caller sees that the write may have
// run although the transaction did not.
func lostWriteError(err error, lost *UnknownOutcomeError) error {
	if errors.Is(err, lost) {
		return err
	}
	return fmt.Errorf("%w (after a write through Tx.Do: %w)", err, lost)
}

// txNotRetried is the error of an attempt of a transaction that would be
// run again but for a write fn sent through Tx.Do (ErrTxNotRetried).
func txNotRetried(err error) error {
	return fmt.Errorf("%w: %w", ErrTxNotRetried, err)
}

// unsentError is the error of a command that Tx.do did not send: it
// changed nothing, so Tx.Do does not count it as a write of fn's.
type unsentError struct{ error }

func (e unsentError) Unwrap() error { return e.error }

// do runs a command on the transaction's connection, after ASKING when
// the transaction runs at an importing node. first says that the command
// is the first write of fn's, which Tx.Do marked: do unmarks it when it
// did not run (unmarkWrite), before the hooks see the command.
func (tx *Tx) do(name string, first bool, args ...any) (reply any, err error) {
	defer func() { tx.unmarkWrite(first, name, err) }() // unless unmarked already
	if err := ctxEnded(tx.ctx); err != nil {
		// Nothing is written under an ended context: a write (LPOP,
		// BLPOP, ...) would run and its reply be lost with the connection.
		return nil, unsentError{fmt.Errorf("shardis: %w (%s not sent)", err, strings.ToUpper(name))}
	}
	if err := tx.fence.enter(); err != nil {
		return nil, unsentError{err}
	}
	if ringMoved(tx.loc, tx.node, tx.keys) {
		// Sent to the shard that no longer serves the keys, a write
		// through Do would stay there, unseen (errTxRingMoved).
		tx.fence.leave()
		return nil, unsentError{errTxRingMoved}
	}
	if tx.th == nil || tx.c.obs.h.Command == nil {
		defer tx.fence.leave()
		return tx.send(name, args)
	}
	start := now()
	reply, err = tx.send(name, args)
	// The hook runs once the round trip left the fence: a slow one does
	// not hold a migration's switch.
	tx.fence.leave()
	tx.unmarkWrite(first, name, err)
	tx.th.command(tx.ctx, tx.node, tx.group, name, args, start, err, tx.hasWritten())
	return reply, err
}

// send writes a command on the transaction's connection and reads its
// reply.
func (tx *Tx) send(name string, args []any) (any, error) {
	ns := tx.c.nodes.get(tx.node)
	node := ns.node
	if err := tx.conn.usable(); err != nil {
		// A protocol error closed the connection: nothing is written,
		// and the command did not run (unsent: a write of fn's that
		// changed nothing does not keep the transaction from running
		// again). The *NodeError stays matchable (errors.As).
		return nil, unsentError{&NodeError{Node: node, Err: err}}
	}
	ns.commands.Add(1) // Stats, as for a command sent by Do
	if tx.asking {
		if err := tx.conn.Send("ASKING"); err != nil {
			tx.c.noteTxFailure(tx.ctx, tx.node, err)
			return nil, &NodeError{Node: node, Err: err}
		}
	}
	var (
		reply any
		err   error
	)
	if cl := (&call{name: name, args: args, info: command.Lookup(name)}); isBlocking(cl) {
		// BLPOP and the like: wait as long as the command asked the
		// server to block, plus the read timeout (see replyTimeout).
		t, terr := tx.c.replyTimeout(tx.ctx, []*call{cl})
		if terr != nil {
			return nil, terr
		}
		stop := context.AfterFunc(tx.ctx, tx.conn.abort)
		defer stop()
		reply, err = tx.conn.DoWithTimeout(t, name, args...)
	} else {
		reply, err = redis.DoContext(tx.conn, tx.ctx, name, args...)
	}
	if err == nil {
		var a txAnswers
		a.reply(name, nil)
		a.note(tx.c, tx.node)
		return reply, nil
	}
	if re, ok := err.(redis.Error); ok {
		if isProtocolError(re) {
			tx.confirmProtocolError()
		}
		closing := unblockedByDemotion(command.Lookup(name), string(re))
		if closing {
			// The server closes the connection after this reply, and
			// reads nothing more on it: the attempt ends as for a
			// connection closed before MULTI (txOnce), not with MULTI
			// ... EXEC written on it, whose outcome a close racing it
			// would leave unknown.
			tx.conn.serverClosing()
		}
		// The server answered, unless it refused the connection
		// (replyError counted that) or cannot serve (txAnswers).
		rerr := tx.c.commandReplyError(tx.node, name, args, re)
		if closing {
			// The command found the connection closing: returned by
			// fn, its error ends the attempt as one that found the
			// connection closed does (closedRead).
			tx.noteClosing(rerr)
		}
		if refusedUnrun(name, rerr) {
			tx.noteRefused(rerr)
		}
		var a txAnswers
		a.reply(name, rerr)
		a.note(tx.c, tx.node)
		return reply, rerr
	}
	tx.c.noteTxFailure(tx.ctx, tx.node, err)
	if writeFailed(err) {
		// The write stopped before the command's end: the server never
		// read it whole, and did not run it. A protocol error that it
		// sent before resetting the connection (a value over its
		// proto-max-bulk-len) is its refusal, the command's reply.
		sent := 1
		if tx.asking {
			sent++
		}
		if re, ok := tx.c.refusalBeforeReset(tx.conn, sent, err); ok {
			return nil, re
		}
		return nil, tx.noteClosed(err, &NodeError{Node: node, Err: contextCause(tx.ctx, err)})
	}
	// The connection failed with the command written: a *NodeError, an
	// *UnknownOutcomeError for a write (see sentError).
	return nil, tx.noteClosed(err, sentError(tx.ctx, node, connCmd{name: name, args: args}, false, err))
}

// confirmProtocolError looks, after a reply of fn's command that reads as
// a protocol error, whether the server closed the connection after it, as
// it does after its own: a PING that is answered says that it did not, and
// that the reply was the command's own error (a script's
// redis.error_reply, a module's), which leaves the connection usable for
// the rest of the transaction. (See readAhead: a Tx's command is read
// alone, with no later reply to tell.)
func (tx *Tx) confirmProtocolError() {
	if ctxEnded(tx.ctx) != nil {
		return
	}
	// On the pool's connection: the tracked one refuses to write after
	// a protocol error. The PING is written and read whole here.
	if r, err := redis.DoWithTimeout(tx.conn.conn, tx.c.readTimeout, "PING"); err == nil && r == "PONG" {
		tx.conn.notProtocolError()
	}
}

// noteRefused records err, the node's refusal of a command of fn's
// before running it (refusedUnrun), as the first such refusal
// (refusal).
func (tx *Tx) noteRefused(err error) {
	tx.mu.Lock()
	if tx.refused == nil {
		tx.refused = err
	}
	tx.mu.Unlock()
}

// refusal returns the first refusal of a command of fn's that the node
// did not run (noteRefused), or nil.
func (tx *Tx) refusal() error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.refused
}

// noteClosing records err, the error reply after which the server closes
// the connection (a demoted master's UNBLOCKED of fn's blocked command,
// which ran nothing), as the first of fn's commands that found the
// connection closed by the server (closedRead), unless the context
// ended.
func (tx *Tx) noteClosing(err error) {
	if ctxEnded(tx.ctx) != nil {
		return
	}
	tx.mu.Lock()
	if tx.closed == nil {
		tx.closed = err
	}
	tx.mu.Unlock()
}

// noteClosed records serr, the error send returns for the connection's
// failure err, as the first of fn's commands that found the connection
// closed by the server (closedRead) when it was that, and returns it.
func (tx *Tx) noteClosed(err, serr error) error {
	if serverClosed(err) && ctxEnded(tx.ctx) == nil {
		tx.mu.Lock()
		if tx.closed == nil {
			tx.closed = serr
		}
		tx.mu.Unlock()
	}
	return serr
}

// noteTxFailure counts the failure err of the connection of a
// transaction (a Client.Tx's, a Conn's) to node i as a Do's is counted
// (send, failSend, receive): in NodeStats.Errors, and towards
// HealthOptions.FailureLimit (noteFailure) unless it is a failed write,
// which is no verdict on the node (see failSend). A failure that the
// caller's context caused is not the node's and is not counted.
func (c *Client) noteTxFailure(ctx context.Context, i int, err error) {
	if !writeFailed(err) {
		c.noteFailure(ctx, i, sentCause(ctx, err))
		return
	}
	if ctxEnded(ctx) != nil {
		return
	}
	ns := c.nodes.get(i)
	ns.errors.Add(1)
	ns.noteCause(err)
}

// commandReplyError is the error of the server's error reply re to the
// command name sent on a connection to node i, as Client.Do makes it: a
// secret echoed back is hidden, and a NOAUTH or WRONGPASS is an
// authentication failure of the connection (replyError), except the
// WRONGPASS that refuses the credentials an AUTH or HELLO of the caller's
// gave, which says nothing of the connection's.
func (c *Client) commandReplyError(i int, name string, args []any, re redis.Error) error {
	re = hideSecretEcho(name, args, re)
	if n := lowerName(name); (n == "auth" || n == "hello") && strings.HasPrefix(string(re), "WRONGPASS ") {
		return re
	}
	err, _ := c.replyError(i, re)
	return err
}

// writeFailed reports whether err is the failure of a write on the
// connection (a reset, a write timeout): a failed write stops before the
// end of what it was given.
func writeFailed(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "write"
}

// Queue adds a command to run between MULTI and EXEC. Its keys must be in
// the transaction's slot or shard, and so must the channel of a PUBLISH
// (ring mode: where its subscribers listen) or an SPUBLISH.
func (tx *Tx) Queue(name string, args ...any) error {
	if tx.isDone() {
		return ErrTxDone
	}
	if err := tx.check(name, args); err != nil {
		return err
	}
	if err := tx.c.moveCommandKeys(tx.ctx, tx.node, name, args); err != nil { // migrate_tx.go
		return err
	}
	// A copy: the caller may reuse its slice (as with redigo's Send).
	q := queued{name: name, args: slices.Clone(args)}
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.done {
		return ErrTxDone
	}
	tx.queued = append(tx.queued, q)
	return nil
}

func (tx *Tx) check(name string, args []any) error {
	if err := txOwnCommand(name); err != nil {
		return err
	}
	if err := txStateRefusal(name, args); err != nil {
		return err
	}
	if lowerName(name) == "select" {
		// Another database than the client's: the transaction's keys
		// would be read and written where the client never looks.
		if err := tx.c.selectRefusal(args); err != nil {
			return err
		}
	}
	keys, err := tx.c.txPlaceKeys(tx.ctx, name, args)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if _, g, err := tx.loc.locate(k); err != nil {
			return err
		} else if g != tx.group {
			return &CrossShardError{Command: strings.ToUpper(name), Keys: []KeyOwner{
				{Key: keyString(k), Owner: tx.loc.groupLabel(g)},
				{Key: "(transaction)", Owner: tx.loc.groupLabel(tx.group)},
			}}
		}
	}
	return nil
}

// commandKeys returns the key arguments of a command: one of the
// generated table, or one learned from the servers (asked now when the
// client has not learned it yet; see learn.go).
func (c *Client) commandKeys(ctx context.Context, name string, args []any) ([]any, error) {
	info, err := c.commandInfo(ctx, name, args)
	if err != nil {
		return nil, err
	}
	pos, err := info.KeyPositions(args, nil)
	if err != nil {
		return nil, errtext.Errorf("%w: %w", ErrBadCommand, err)
	}
	keys := make([]any, len(pos))
	for i, p := range pos {
		keys[i] = args[p]
	}
	return keys, nil
}

// txPlaceKeys returns what must be on a transaction's node for a command
// to run there: its keys or, for a keyless PUBLISH in ring or router mode
// and for SPUBLISH, its channel. PUBLISH through the client goes to the
// shard its channel hashes to, where a Subscription listens
// (pubsub_route.go); run on another shard inside a transaction, it
// reached no subscriber, and the message was lost without an error. (A
// cluster broadcasts PUBLISH from any node.)
func (c *Client) txPlaceKeys(ctx context.Context, name string, args []any) ([]any, error) {
	keys, err := c.commandKeys(ctx, name, args)
	if err != nil || len(keys) > 0 {
		return keys, err
	}
	info := lookupCommand(name)
	if info == spublishInfo || (info == publishInfo && c.cl() == nil) {
		for _, p := range publishChannel(info, args, nil) {
			keys = append(keys, args[p])
		}
	}
	return keys, nil
}

// Tx runs a transaction over keys, which must all live in one slot
// (cluster mode) or on one shard (ring mode): WATCH keys, call fn (which
// may read with tx.Do and queues writes with tx.Queue), then MULTI, the
// queued commands and EXEC on that node. It returns EXEC's replies, one
// per queued command. A watched key that changed gives ErrTxAborted.
//
// In cluster mode, when the slot is redirected before EXEC, the whole
// transaction — fn included — runs again, until it runs or MaxRetryWait
// (or ctx) is spent, unless fn wrote (see below): after MOVED on the new
// owner at once; after ASK (the slot is migrating) at the importing node, with ASKING in front of each
// command, so it need not wait for the migration to end; after TRYAGAIN,
// CLUSTERDOWN, LOADING, MASTERDOWN, READONLY, more than MaxRedirects
// redirects in a row, or a node that could not be reached before anything
// was sent (a dead master, until its replica takes over), after a backoff
// and a look at the topology; a MULTI ... EXEC write that the node resets
// before its end likewise, but not after a second reset in a row (a value
// over its limits: the *NodeError says it did not run). When the budget
// is spent the error is a *RetryError. A transaction is never split over nodes: keys on
// different slots fail with a *CrossShardError before anything is sent.
// A command of fn's that the server refused with a protocol error (an
// argument over its proto-max-bulk-len), after which it closed the
// transaction's connection, ends the transaction at once, even when fn
// went on: every attempt would meet it again. The error is a *NodeError
// that wraps the refusal (a redis.Error), or fn's own error.
//
// In ring mode with HealthOptions.AutoEject, a transaction is placed by
// the ring of its WATCH throughout; when an ejection or a restore has
// moved its keys to another shard, tx.Do fails from then on with an
// error matching ErrTxAborted, nothing of MULTI ... EXEC is sent, and
// the whole transaction, fn included, runs again by the ring now (a few
// times at most; then its error matches ErrTxAborted). A Conn's transaction is refused so, with an error
// matching ErrTxAborted, on its first command after the move.
//
// A command that may write sent through tx.Do runs at once, outside
// MULTI: once fn has sent one, the transaction is never run again (fn
// would write twice), in cluster mode as on a Sentinel shard. A failure
// that would have run it again returns an error that wraps both
// ErrTxNotRetried and that failure (the MOVED, ASK, CLUSTERDOWN, READONLY,
// ... redis.Error, the *NodeError). A write the node refused before
// running it (MOVED, ASK, TRYAGAIN, CLUSTERDOWN, for any command; for
// Redis's own commands, not a script's, a function's or a module's, also
// READONLY, LOADING, MASTERDOWN, NOREPLICAS, OOM, NOPERM, MISCONF,
// BUSY, and the UNBLOCKED with which a master demoted by a failover ends
// a blocked BLPOP, XREAD BLOCK, ...), one it never read
// whole (a protocol error, a write cut short) and one not sent (the
// connection was closed) changed nothing and do not count. Queue writes with tx.Queue to have them retried.
// A write whose connection failed once it was sent whole may have run (its
// error is an *UnknownOutcomeError); when fn ignores that error and
// returns nil, the transaction fails on the dead connection, and its
// error (a *NodeError) also wraps that *UnknownOutcomeError: nothing of
// MULTI ... EXEC ran, but the write may have.
//
// When the server closes the transaction's connection before MULTI is
// sent (a CLIENT KILL, its client timeout, a restart, a demoted master
// after the UNBLOCKED with which it ends a blocked command of fn's), seen
// before MULTI ... EXEC is written or met by a command of fn's whose
// error (that UNBLOCKED included) fn returns, nothing ran but fn's reads: the transaction runs again, fn
// included, on a fresh connection, up to three times in a row and not once
// the failures marked the node down, in every mode, unless fn wrote
// through tx.Do (ErrTxNotRetried; the *NodeError says that MULTI was not
// sent). A close while MULTI ... EXEC is on its way leaves EXEC's outcome
// unknown (an *UnknownOutcomeError when a queued command may write).
//
// On a Sentinel shard with SentinelOptions.FailoverWait, a transaction
// that failed as a command waiting for a new master would (its master
// unreachable, READONLY, MASTERDOWN, LOADING, NOREPLICAS) runs again, fn
// included, within FailoverWait, but only when nothing of it can have
// run: the failure came before MULTI ... EXEC was written whole (fn's
// returning the master's refusal of a command it sent through tx.Do, a
// READONLY say, included), or EXEC itself was refused with an error reply
// (which runs nothing), and fn sent
// no command through tx.Do that may write (it ran at once; the error then
// wraps ErrTxNotRetried). A transaction
// whose connection failed after EXEC was written is never run again (an
// *UnknownOutcomeError when a queued command may write), nor one whose
// MULTI ... EXEC write the master reset twice in a row (a value over its
// proto-max-bulk-len).
//
// The hooks (Config.Hooks) see the transaction as one operation named
// "MULTI", all its attempts included (Op); its WATCH and each tx.Do as
// commands on its node (Hooks.Command), and each attempt's MULTI ... EXEC
// as one batch there (Hooks.Pipeline), whose EXEC is OutcomeServerError
// with ErrTxAborted when a watched key changed.
func (c *Client) Tx(ctx context.Context, keys []string, fn func(tx *Tx) error) ([]any, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: a transaction needs at least one key", ErrBadCommand)
	}
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	// One operation for the hooks, whatever the attempts (hooks_tx.go).
	ctx, th := c.txStart(ctx, args)
	if th == nil {
		return c.txRun(ctx, keys, args, fn, nil)
	}
	ended := false
	defer func() {
		if !ended { // fn panicked: the operation ends (a tracer's span too)
			th.finish(ctx, errTxPanicked)
		}
	}()
	reply, err := c.txRun(ctx, keys, args, fn, th)
	ended = true
	th.finish(ctx, err)
	return reply, err
}

// maxTxConnClosed bounds how many times in a row Client.Tx runs a
// transaction again because the server closed its connection before
// MULTI was sent.
const maxTxConnClosed = 3

// errTxPanicked is the error the Finish hook sees for a transaction whose
// function panicked (the panic goes on to Tx's caller).
var errTxPanicked = errors.New("shardis: the transaction's function panicked")

// txRun is Client.Tx once its arguments are checked: it runs the
// transaction until it runs or fails for good.
func (c *Client) txRun(ctx context.Context, keys []string, args []any, fn func(tx *Tx) error, th *txHooks) ([]any, error) {
	var (
		last    string
		backoff = 5 * time.Millisecond
		start   = time.Now()
		ask     = -1    // the node an ASK named: the next attempt runs there
		hops    = 0     // MOVED and ASK redirects since the last wait
		again   = false // this attempt sends the transaction again (Stats' Retries)
		resets  = 0     // writes of MULTI ... EXEC reset before their end, in a row
		closed  = 0     // connections the server closed before MULTI, in a row
		sw      sentinelTxWait
	)
	for attempt := 0; ; attempt++ {
		if th != nil {
			th.attempt = attempt
		}
		if err := ctx.Err(); err != nil {
			if last != "" {
				return nil, fmt.Errorf("shardis: %w (while retrying: %s)", err, last)
			}
			return nil, fmt.Errorf("shardis: %w", err)
		}
		plan := c.planTx() // the topology the migration's fence allows (migrate_plan.go)
		node, group, err := plan.loc.locate(keys[0])
		if err != nil {
			return nil, err
		}
		for _, k := range keys[1:] {
			if _, g, err := plan.loc.locate(k); err != nil {
				return nil, err
			} else if g != group {
				return nil, crossShardError(plan.loc, "WATCH", args, allPositions(len(args)))
			}
		}
		asking := false
		if ask >= 0 {
			node, asking, ask = ask, true, -1
		}
		if again {
			// Counted on the node it goes to, as a command sent again
			// is (retryCluster), not on the one that failed it.
			c.nodes.get(node).retries.Add(1)
			again = false
		}
		if err := c.moveKeys(ctx, node, args); err != nil { // a migration's moves first (migrate_exec.go)
			return nil, err
		}
		reply, how, wrote, err := c.txOnce(ctx, plan, node, asking, group, args, fn, th)
		if c.txFenceRetry(err, attempt) { // migrate_tx.go
			if wrote {
				return nil, txNotRetried(err)
			}
			continue
		}
		if how == txNotRun && errors.Is(err, errTxConnClosed) {
			// The server closed the connection before MULTI was sent:
			// nothing ran but fn's reads, and a fresh connection runs
			// the transaction again at once; a server that closes
			// connection after connection, or whose failures marked it
			// down (HealthOptions.FailureLimit), leaves the caller the
			// error.
			if wrote {
				return nil, txNotRetried(err)
			}
			if closed++; closed <= maxTxConnClosed && !c.nodes.get(node).down.Load() {
				last, again = err.Error(), true
				continue
			}
			return nil, err
		}
		closed = 0
		if c.cl() == nil || err == nil {
			c.noteSentinelTxFailure(ctx, node, err)
			if wrote && how != txMayHaveRun {
				// Nothing of MULTI ... EXEC ran, but fn's write did:
				// never run again, and said so when it would have been.
				if err != nil && c.sentinelTxRetried(ctx, node, err) {
					err = txNotRetried(err)
				}
				how = txMayHaveRun
			}
			if retry, ferr := c.retrySentinelTx(ctx, node, attempt, err, how, &sw, "MULTI/EXEC"); retry {
				last, again = err.Error(), true
				continue
			} else if ferr != nil {
				err = ferr
			}
			return reply, err
		}
		ns := c.nodes.get(node)
		var (
			re   redis.Error
			ne   *NodeError
			code string
		)
		if errors.As(err, &ne) && errors.Is(ne.Err, errNotWritten) {
			if resets++; resets >= 2 {
				// The node reset the write again, with no refusal (a
				// value over its client-query-buffer-limit): it refuses
				// the transaction, which did not run, as judge does for
				// a command; not sent again until MaxRetryWait.
				return reply, err
			}
		} else {
			resets = 0
		}
		switch {
		case errors.As(err, &re):
			code = cluster.ErrorCode(string(re))
		case errors.As(err, &ne) && errors.Is(ne.Err, errAfterProtocolError):
			// fn's own tx.Do was refused with a protocol error, which
			// closed the connection (fn returned the error of a later
			// command on it): the server refuses fn's arguments, and
			// would at every attempt. Not run again.
			return reply, err
		case errors.As(err, &ne) && (notSent(ne.Err) || wrote && how == txNotWritten && writeFailed(ne.Err)) && !isAuthFailure(ne.Err):
			// The node could not be reached (a dead master before its
			// replica takes over, a node marked down): nothing was sent.
			// Look at the topology again, wait, and route again. (A
			// write of MULTI ... EXEC reset before its end, after fn
			// wrote through Do: not errNotWritten, which would say that
			// nothing ran, but not run again either; see below.)
			code, re = "NODE", redis.Error(ne.Error())
		default:
			return reply, err
		}
		wait := true
		switch code {
		case "MOVED", "ASK":
			hops++
			rd, ok := cluster.ParseRedirect(string(re), ns.node.Addr)
			switch {
			case ok && rd.Kind == cluster.Moved:
				ns.moved.Add(1)
				c.applyMoved(rd.Slot, rd.Addr)
				c.refresh(ctx, false)
				wait = false
			case ok:
				// The slot is moving and the key is not (or no longer) on
				// the source: run the transaction at the importing node,
				// with ASKING in front of each command (see txOnce).
				ns.ask.Add(1)
				ask = c.nodes.add(Node{Name: rd.Addr, Addr: rd.Addr})
				wait = false
			default:
				countRedirect(ns, string(re))
				c.refresh(ctx, true) // an endpoint we cannot dial: look again
			}
			if hops > c.clusterOpts().MaxRedirects {
				// A redirect loop, or a slot bouncing between the two
				// nodes of a migration: back off before the next try.
				wait, hops = true, 0
			}
		case "TRYAGAIN":
			// A multi-key transaction at the importing node while some of
			// its keys are still on the source: wait for them to move.
			ns.tryAgain.Add(1)
			hops = 0
		case "CLUSTERDOWN", "LOADING", "MASTERDOWN", "READONLY", "NODE":
			hops = 0
			c.refresh(ctx, true)
		default:
			return reply, err
		}
		if wrote {
			// fn wrote through Do, which ran at once: running fn again
			// would write again.
			return nil, txNotRetried(err)
		}
		last = string(re)
		again = true
		if !wait {
			if time.Since(start) > c.clusterOpts().MaxRetryWait {
				return nil, &RetryError{Command: "MULTI/EXEC", Attempts: attempt + 1, Last: last, Err: err}
			}
			continue
		}
		d := backoff
		backoff = min(backoff*2, 100*time.Millisecond) // doubling on would overflow
		if time.Since(start)+d > c.clusterOpts().MaxRetryWait {
			return nil, &RetryError{Command: "MULTI/EXEC", Attempts: attempt + 1, Last: last + " (waited too long for the cluster)", Err: err}
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

func allPositions(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// txOnce runs one attempt of a transaction on node. With asking (after an
// ASK redirect, at the slot's importing node) every command goes with
// ASKING in front: Redis forgets ASKING after each command, except inside
// MULTI, where it holds until EXEC, so ASKING before WATCH, before each of
// fn's commands and before MULTI covers the whole transaction.
//
// wrote says that fn sent through tx.Do a command that may write and that
// the node did not refuse before running it (Tx.Do): it ran at once, and
// running fn again would run it twice. how says what the attempt's end
// would allow were it not for that write, which only the caller weighs:
// a failure that would be retried is then returned as ErrTxNotRetried's.
func (c *Client) txOnce(ctx context.Context, plan txPlan, node int, asking bool, group int, keys []any, fn func(tx *Tx) error, th *txHooks) (vals []any, how txEnd, wrote bool, err error) {
	ns := c.nodes.get(node)
	if ns.down.Load() {
		// The WATCH fails fast, counted as a command sent to a node
		// marked down is (send).
		ns.commands.Add(1)
		ns.errors.Add(1)
		err := &NodeError{Node: ns.node, Err: ns.downErr()}
		th.failFast(ctx, node, group, keys, err)
		return nil, txNotRun, false, err
	}
	conn, err := c.borrowTracked(ctx, ns.node.Addr)
	if err != nil {
		c.noteFailure(ctx, node, err) // as for a Do's (Stats, health)
		err := &NodeError{Node: ns.node, Err: err}
		th.failFast(ctx, node, group, keys, err)
		return nil, txNotRun, false, err
	}
	// The MULTI ... EXEC batch goes to the Pipeline hook once the
	// connection is back in the pool and the fence left, as a pipeline's
	// part does: a hook does not hold them (deferred before both).
	var report func()
	defer func() {
		if report != nil {
			report()
		}
	}()
	// Back to the pool as a fresh connection is: DISCARD or UNWATCH when
	// fn or a send failed, closed when tx.Do changed the connection.
	defer conn.release()
	if th != nil {
		th.node, th.watching = node, true
		th.server = c.dialedServer(ns.node, conn.conn)
	}
	tx := &Tx{ctx: ctx, conn: conn, loc: plan.loc, group: group, asking: asking, c: c, node: node, fence: plan, th: th, keys: keys}
	_, err = tx.do("WATCH", false, keys...)
	if th != nil {
		th.watching = false
	}
	if err != nil {
		tx.end()
		return nil, txNotRun, false, err // WATCH changes nothing but the connection
	}
	err = fn(tx)
	queue := tx.end() // from now on Do and Queue fail with ErrTxDone
	wrote = tx.hasWritten()
	if err != nil {
		if cerr := tx.closedRead(); cerr != nil && errors.Is(err, cerr) {
			// fn gave up on a command of its that found the connection
			// closed by the server: a read (a write would be wrote),
			// and nothing of MULTI ... EXEC was sent. txRun runs the
			// transaction again on a fresh connection, unless fn wrote.
			return nil, txNotRun, wrote, fmt.Errorf("%w (%w)", err, errTxConnClosed)
		}
		if rerr := tx.refusal(); rerr != nil && errors.Is(err, rerr) {
			// fn gave up on the node's refusal of a command of its
			// (a demoted master's READONLY, MASTERDOWN, ...), which
			// ran nothing, and nothing of MULTI ... EXEC was sent: on
			// a Sentinel shard the transaction may run again at the
			// new master (retrySentinelTx), as when EXEC met the
			// refusal, and as cluster mode does, unless fn wrote.
			return nil, txNotRun, wrote, err
		}
		return nil, txMayHaveRun, wrote, err
	}
	if lost := tx.lostWrite(); lost != nil {
		// fn went on after a write of its own whose connection failed
		// once it was sent whole (it ignored the error): the attempt
		// fails on that connection, and its error says that the write
		// may have run. (Deferred before the hooks' report: they see
		// the attempt's own failure.)
		defer func() {
			if err != nil {
				err = lostWriteError(err, lost)
			}
		}()
	}
	if err := tx.fence.enter(); err != nil { // nothing of MULTI is sent
		return nil, txMayHaveRun, wrote, err
	}
	defer tx.fence.leave()
	if ringMoved(plan.loc, node, keys) { // nothing of MULTI is sent (ring_view.go)
		return nil, txMayHaveRun, wrote, errTxRingMoved
	}
	if err := ctxEnded(ctx); err != nil {
		// The context ended while fn ran: nothing of MULTI ... EXEC is
		// written (the connection would be closed only once the write
		// was on its way, and the transaction would run unreported).
		return nil, txMayHaveRun, wrote, fmt.Errorf("shardis: %w before MULTI was sent (the transaction did not run)", err)
	}
	if err := conn.usable(); err != nil {
		// A protocol error in fn's tx.Do closed the connection: nothing
		// of MULTI ... EXEC is written (the transaction did not run).
		// The error wraps the server's refusal, which fn may have
		// ignored: it is the transaction's failure, and since it is the
		// server's verdict on fn's own arguments, which the next attempt
		// would send again, txRun does not run the transaction again.
		if re, ok := conn.protocolRefusal(); ok {
			err = fmt.Errorf("%w (the transaction did not run): %w", err, re)
		}
		return nil, txMayHaveRun, wrote, &NodeError{Node: ns.node, Err: err}
	}
	if cerr := conn.closedByServer(); cerr != nil {
		// The server closed the connection after WATCH and fn's commands
		// (a CLIENT KILL, its client timeout, a restart): nothing of
		// MULTI ... EXEC is written, which would fail only once sent,
		// its outcome unknown. Nothing of it ran: txRun runs the
		// transaction again on a fresh connection, unless fn wrote. The
		// failure counts as one under a command would (noteTxFailure).
		c.noteTxFailure(ctx, node, cerr)
		return nil, txNotRun, wrote, &NodeError{Node: ns.node, Err: fmt.Errorf("%w: %w", errTxConnClosed, cerr)}
	}
	var (
		calls    []*call // the batch's calls for the hooks, nil without them (no ASKING)
		received int     // the replies read, ASKING's included
		skip     int     // the replies before MULTI's: ASKING's, which has no call
	)
	if asking {
		skip = 1
	}
	if th != nil {
		calls = th.batch(node, group, asking, queue)
		start := now()
		defer func() {
			// The commands without a reply share the batch's failure,
			// as each may take it (lostReplyErr).
			for k := max(received-skip, 0); err != nil && k < len(calls); k++ {
				calls[k].err = lostReplyErr(calls[k], err)
			}
			took := time.Since(start)
			// Nothing of the attempt ran (how, as txRun gets it): a
			// Sentinel shard may run it again (retrySentinelTx).
			retried := how != txMayHaveRun && !wrote && err != nil && c.sentinelTxRetried(ctx, node, err)
			report = func() { th.pipeline(ctx, node, calls, start, took, retried, wrote) }
		}()
	}
	// Nothing of the attempt ran when nothing of MULTI ... EXEC did,
	// but for what fn wrote through Do (wrote).
	unrun := txNotRun
	ns.commands.Add(int64(2 + len(queue))) // MULTI, the queue, EXEC (Stats)
	replies := 0
	if asking {
		if err := conn.Send("ASKING"); err != nil {
			c.noteTxFailure(ctx, node, err)
			return nil, txMayHaveRun, wrote, &NodeError{Node: ns.node, Err: err}
		}
		replies++
	}
	// A write that fails stops before the end of what it was given,
	// which ends with the command being queued (a Send writes once the
	// command that fills the buffer is in) or EXEC (Flush): the server
	// never read a whole EXEC, and discards MULTI's queue with the
	// connection. Nothing ran (txWriteFailed).
	replies++
	if err := conn.Send("MULTI"); err != nil {
		how, err := c.txWriteFailed(ctx, node, conn, replies, err, wrote)
		return nil, how, wrote, err
	}
	for _, q := range queue {
		replies++
		if err := conn.Send(q.name, q.args...); err != nil {
			how, err := c.txWriteFailed(ctx, node, conn, replies, err, wrote)
			return nil, how, wrote, err
		}
	}
	replies++
	if err := conn.Send("EXEC"); err != nil {
		how, err := c.txWriteFailed(ctx, node, conn, replies, err, wrote)
		return nil, how, wrote, err
	}
	stop := context.AfterFunc(ctx, conn.abort) // the write too ends with ctx
	defer stop()
	if err := conn.Flush(); err != nil {
		how, err := c.txWriteFailed(ctx, node, conn, replies, err, wrote)
		return nil, how, wrote, err
	}
	// The replies are read one at a time (as Do would, returning the
	// first error reply among them), so that a protocol error reply is
	// seen: the server closed the connection after it and ran nothing
	// written after the command, EXEC included.
	var (
		reply    any
		firstErr error
		refused  bool // EXEC's own reply is an error: it ran nothing
		answers  txAnswers
	)
	first := replies - 1 - len(queue) // the reply of queue[0]
	nameOf := func(k int) string {
		switch q := k - first; {
		case q >= 0 && q < len(queue):
			return queue[q].name
		case q == len(queue):
			return "EXEC"
		case q == -1:
			return "MULTI"
		}
		return "ASKING"
	}
	for k := range replies {
		received = k
		r, err := redis.ReceiveContext(conn, ctx)
		var re redis.Error
		switch {
		case err == nil:
			reply = r
			answers.reply(nameOf(k), nil)
		case errors.As(err, &re) && isProtocolError(re):
			return nil, txMayHaveRun, wrote, re
		case errors.As(err, &re):
			// As through Client.Do: a queued command's refusal that
			// echoes a secret of its arguments is hidden, and a NOAUTH
			// is an authentication failure.
			if q := k - first; q >= 0 && q < len(queue) {
				re = hideSecretEcho(queue[q].name, queue[q].args, re)
			}
			if calls != nil {
				// ASKING's refusal goes to MULTI, sent after it.
				calls[max(k-skip, 0)].err = re
			}
			if firstErr == nil {
				firstErr, _ = c.replyError(node, re)
			}
			answers.reply(nameOf(k), c.authReply(ns.node.Addr, re))
			refused = k == replies-1
			reply = nil
		default:
			c.noteTxFailure(ctx, node, err)
			return nil, txMayHaveRun, wrote, execFailed(ctx, ns.node, queue, err)
		}
		received = k + 1
	}
	answers.note(c, node) // the server answered every command
	if firstErr != nil {
		if refused {
			return nil, unrun, wrote, firstErr
		}
		return nil, txMayHaveRun, wrote, firstErr
	}
	if reply == nil {
		if calls != nil {
			calls[len(calls)-1].err = ErrTxAborted // EXEC's
		}
		return nil, txMayHaveRun, wrote, ErrTxAborted
	}
	vals, err = redis.Values(reply, nil)
	if err != nil {
		return nil, txMayHaveRun, wrote, fmt.Errorf("shardis: EXEC: %w", err)
	}
	return vals, txMayHaveRun, wrote, nil
}

// txWriteFailed ends an attempt of a transaction whose write of MULTI ...
// EXEC failed with err once sent commands (ASKING, MULTI, the queue,
// EXEC) were handed to the connection: the last of them was not written
// whole, EXEC was not, and nothing of MULTI ... EXEC ran. A server that
// refuses a queued command with a protocol error (a value over its
// proto-max-bulk-len) sends that refusal and resets the connection while
// the rest is still being written: read before the reset
// (refusalBeforeReset), the refusal is the error, as when the whole write
// went out and it was read after it, and the attempt is not run again (no
// failover refuses a value). Otherwise the error says that the
// transaction did not run (errNotWritten), unless fn wrote through Do
// (wrote), which did run: then the write's error alone is returned. The
// attempt ended txNotWritten (txMayHaveRun after a refusal).
func (c *Client) txWriteFailed(ctx context.Context, node int, conn *trackedConn, sent int, err error, wrote bool) (txEnd, error) {
	c.noteTxFailure(ctx, node, err)
	if re, ok := c.refusalBeforeReset(conn, sent, err); ok {
		return txMayHaveRun, re
	}
	cause := contextCause(ctx, err)
	if !wrote && writeFailed(err) {
		cause = fmt.Errorf("%w: %w", errNotWritten, cause)
	}
	return txNotWritten, &NodeError{Node: c.nodes.get(node).node, Err: cause}
}

// refusalBeforeReset reads, after a write of sent commands on conn failed
// with err, the replies the server sent before it reset the connection
// (the pool's connection keeps them readable, and returns them, then the
// reset, without waiting: pool/liveconn.go), and returns the first that
// is a protocol error: the server's refusal of a command, after which it
// read and ran nothing more. It reports false when there is none, or when
// err is no failed write (the connection was closed: nothing is left to
// read).
func (c *Client) refusalBeforeReset(conn *trackedConn, sent int, err error) (redis.Error, bool) {
	if !writeFailed(err) {
		return "", false
	}
	for range sent {
		_, err := conn.ReceiveWithTimeout(c.readTimeout)
		var re redis.Error
		switch {
		case err == nil:
		case errors.As(err, &re) && isProtocolError(re):
			return re, true
		case errors.As(err, &re):
		default:
			return "", false
		}
	}
	return "", false
}

// execFailed is the error of a transaction whose connection failed once
// MULTI ... EXEC was written whole: it may have run. When the caller's context
// ended the wait, the error wraps the context's error and says so; else,
// when a queued command may write, it is an *UnknownOutcomeError for EXEC
// (as for any write whose connection failed after sending), which is
// never sent again.
func execFailed(ctx context.Context, node Node, queued []queued, err error) error {
	ne := &NodeError{Node: node, Err: sentCause(ctx, err)}
	if errors.Is(ne.Err, context.Canceled) || errors.Is(ne.Err, context.DeadlineExceeded) {
		return ne
	}
	for _, q := range queued {
		if mayWrite(command.Lookup(q.name).Resolve(q.args)) {
			return &UnknownOutcomeError{Command: "EXEC", Node: node, Err: ne}
		}
	}
	return ne
}
