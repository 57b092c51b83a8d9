package shard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard/command"
)

// flusher sends one Flush's worth of a routedConn's commands. The
// commands go out in runs, in the order they were sent: consecutive
// routed commands as one Pipeline (a round trip per node), consecutive
// commands of the transaction as one round trip on its connection. A run
// is sent before a command of another kind is, so commands execute in the
// order they were sent.
type flusher struct {
	rc   *routedConn
	ctx  context.Context
	cmds []connCmd
	res  []Result

	plain    []int // indexes of the routed run
	pinned   []int // indexes of the transaction run; -1: a reply to drop
	pinnedAt []connCmd
	pinnedIn []bool // the command goes between MULTI and EXEC (MULTI and EXEC included)

	multiAt int // index of a MULTI of this flush not yet sent, or -1
	// multiRefusal: the server's refusal of a MULTI that the Conn had
	// answered itself (openMulti).
	multiRefusal error
	held         []int // keyless commands after MULTI, waiting for its first key
	scanned      bool  // the transaction of this flush was checked as a whole
	quit         bool  // QUIT: the Conn closes after this flush
}

// flushLocked sends every queued command and appends one result per
// command to rc.replies.
func (rc *routedConn) flushLocked(ctx context.Context) {
	if len(rc.queue) == 0 {
		return
	}
	if rc.c.closed.Load() {
		// Nothing is sent once the client is closed, not even on the
		// transaction's connection, which is let go (closed by its pool).
		rc.tx.end()
		for range rc.queue {
			rc.replies = append(rc.replies, Result{Err: ErrClosed})
		}
		rc.queue = nil
		return
	}
	f := &flusher{rc: rc, ctx: ctx, cmds: rc.queue, res: make([]Result, len(rc.queue)), multiAt: -1}
	rc.queue = nil
	for i := range f.cmds {
		f.step(i)
	}
	f.endOfFlush()
	rc.replies = append(rc.replies, f.res...)
	if f.quit { // closed, but this Do still returns its replies
		rc.closed = true
		rc.tx.end()
	}
}

// lowerName returns the command's table name (lower case), or "" for a
// command the table does not know.
func lowerName(name string) string {
	if info := command.Lookup(name); info != nil {
		return info.Name
	}
	return ""
}

// step handles command i.
func (f *flusher) step(i int) {
	rc, cmd := f.rc, f.cmds[i]
	tx := &rc.tx
	if f.quit {
		f.res[i] = Result{Err: ErrConnClosed}
		return
	}
	name := lowerName(cmd.name)
	if tx.refused != nil { // everything up to EXEC or DISCARD fails
		switch name {
		case "exec":
			f.res[i] = Result{Err: tx.refused}
			tx.finish()
		case "discard":
			f.res[i] = Result{Reply: "OK"}
			tx.finish()
		default:
			f.res[i] = Result{Err: tx.refused}
		}
		return
	}
	switch name {
	case "quit":
		f.sendRuns()
		f.res[i] = Result{Reply: "OK"}
		f.quit = true
		return
	case "reset":
		f.sendRuns()
		tx.end()
		f.res[i] = Result{Reply: "RESET"}
		return
	}
	if tx.multi {
		f.inMulti(i, name)
		return
	}
	switch name {
	case "multi":
		// The commands before MULTI are not the transaction's: they run
		// whatever becomes of it.
		f.sendRuns()
		tx.multi, tx.multiOK = true, false
		f.scanned = true
		err := tx.lost
		if err == nil {
			err = f.watchClosed()
		}
		if err == nil {
			err = f.checkTx(i + 1)
		}
		if err != nil {
			f.refuse(err)
			f.res[i] = Result{Err: err}
			return
		}
		if tx.conn != nil {
			f.addPinned(i)
			tx.multiSent = true
		} else {
			f.multiAt = i
		}
		return
	case "exec", "discard":
		// Without MULTI (inside it, inMulti has them): the server
		// refuses them and the WATCH stays armed, as does the Conn's.
		if tx.conn != nil {
			f.addPinned(i)
			return
		}
		f.res[i] = Result{Err: fmt.Errorf("%w: %s without MULTI", ErrBadCommand, strings.ToUpper(name))}
		return
	case "watch":
		f.watch(i)
		return
	case "unwatch":
		tx.lost = nil
		if tx.conn != nil {
			f.addPinned(i)
			tx.closing = true
			return
		}
		f.res[i] = Result{Reply: "OK"} // nothing is watched
		return
	case "ping", "echo":
		if tx.conn != nil {
			f.addPinned(i)
			return
		}
		f.sendRuns()
		f.res[i] = f.rc.everyShard(f.ctx, cmd)
		return
	case "select":
		f.res[i] = f.rc.selectDB(cmd.args)
		return
	}
	if tx.conn != nil && f.inPinnedGroup(cmd) {
		if err := f.moveKeys(cmd); err != nil { // migrate_tx.go
			f.res[i] = Result{Err: err}
			return
		}
		f.addPinned(i) // a read under WATCH, on the watching connection
		return
	}
	f.addPlain(i)
}

// inMulti handles command i between MULTI and EXEC or DISCARD.
func (f *flusher) inMulti(i int, name string) {
	tx := &f.rc.tx
	cmd := f.cmds[i]
	if !f.scanned {
		f.scanned = true
		if err := f.checkTx(i); err != nil {
			f.refuse(err)
			f.res[i] = Result{Err: err}
			if name == "exec" || name == "discard" {
				if name == "discard" {
					f.res[i] = Result{Reply: "OK"}
				}
				tx.finish()
			}
			return
		}
	}
	switch name {
	case "multi":
		f.res[i] = Result{Err: fmt.Errorf("%w: MULTI calls can not be nested", ErrBadCommand)}
		return
	case "watch":
		f.res[i] = Result{Err: fmt.Errorf("%w: WATCH inside MULTI is not allowed", ErrBadCommand)}
		return
	case "exec", "discard":
		if tx.conn == nil {
			if len(f.held) > 0 {
				f.refuseHeld()
				f.step(i)
				return
			}
			// Nothing was queued: nothing to run anywhere.
			f.answerMulti()
			if name == "exec" {
				f.res[i] = Result{Reply: []any{}}
			} else {
				f.res[i] = Result{Reply: "OK"}
			}
			tx.finish()
			return
		}
		f.addPinned(i)
		tx.multi, tx.closing = false, true
		return
	}
	keys, err := f.txKeys(cmd)
	if err == nil && len(keys) == 0 && name != "unwatch" { // the server queues UNWATCH like any command
		if name == "select" {
			// The configured database is queued like any keyless
			// command (it changes nothing); another is refused.
			err = f.rc.c.selectRefusal(cmd.args)
		} else if eff := command.EffectOf(nil, cmd.name, cmd.args); stateRefusal(eff, cmd.name, cmd.args) != nil {
			err = stateRefusal(eff, cmd.name, cmd.args)
		}
	}
	if err != nil {
		f.refuse(err)
		f.res[i] = Result{Err: err}
		return
	}
	if len(keys) == 0 {
		if tx.conn != nil {
			f.addPinned(i)
		} else {
			f.held = append(f.held, i)
		}
		return
	}
	if tx.conn == nil {
		if err := f.pinFor(keys[0]); err != nil { // migrate_tx.go
			f.refuse(err)
			f.res[i] = Result{Err: err}
			return
		}
	}
	err = f.rc.sameGroup(cmd, keys) // a Do-by-Do transaction
	if err == nil {
		err = f.moveKeys(cmd) // migrate_tx.go
	}
	if err != nil {
		f.refuse(err)
		f.res[i] = Result{Err: err}
		return
	}
	f.addPinned(i)
}

// pin borrows the transaction's connection to node.
func (f *flusher) pin(node, group int) error {
	tx := &f.rc.tx
	f.sendPlain()
	conn, err := f.rc.c.borrowPinned(f.ctx, node)
	if err != nil {
		return err
	}
	tx.conn, tx.node, tx.group = conn, node, group
	return nil
}

// openMulti, once the Conn is pinned inside MULTI, sends MULTI and the
// keyless commands held for it. A MULTI the Conn answered itself, before
// any key was known (its caller was told OK), goes alone, and its reply
// is read before anything else is sent: were the server to refuse it (an
// ACL user without MULTI), the commands its caller takes for queued would
// run at once, outside any transaction, and its EXEC be refused as one
// without MULTI. The error is then the server's refusal, with which the
// caller's transaction fails up to its EXEC or DISCARD (flusher.refuse),
// or the failure that kept MULTI from being answered.
func (f *flusher) openMulti() error {
	tx := &f.rc.tx
	if !tx.multi || tx.multiSent {
		return nil
	}
	answered := f.multiAt < 0
	f.pinned = append(f.pinned, f.multiAt) // -1: MULTI was answered already
	f.pinnedAt = append(f.pinnedAt, connCmd{name: "MULTI"})
	f.pinnedIn = append(f.pinnedIn, true)
	f.multiAt = -1
	tx.multiSent = true
	if answered {
		f.multiRefusal = nil
		f.sendPinned()
		switch {
		case f.multiRefusal != nil:
			err := f.multiRefusal
			f.multiRefusal = nil
			return fmt.Errorf("shardis: the server refused MULTI, answered before the transaction's first key (nothing of the transaction was sent): %w", err)
		case tx.refused != nil: // the connection failed, or a migration's fence refused the run
			return tx.refused
		}
	}
	for _, h := range f.held {
		f.addPinned(h)
	}
	f.held = f.held[:0]
	return nil
}

// watchClosed is the refusal of a MULTI on the connection that holds the
// Conn's WATCH when the server closed that connection (CLIENT KILL, its
// client timeout, a restart), as its socket shows without a round trip:
// MULTI ... EXEC written on it would fail only once sent, EXEC's outcome
// unknown, although nothing of it could run. Nothing is sent; the error
// matches ErrWatchLost, and the caller, who drives the Conn, watches
// again (nothing is run again for it). nil when the connection may still
// be written on.
func (f *flusher) watchClosed() error {
	tx := &f.rc.tx
	if tx.conn == nil || !tx.watched {
		return nil
	}
	cerr := tx.conn.closedByServer()
	if cerr == nil {
		return nil
	}
	f.rc.c.noteTxFailure(f.ctx, tx.node, cerr) // as for a failure met by a command
	node := f.rc.c.nodes.get(tx.node).node
	return &NodeError{Node: node, Err: errtext.Errorf("%w (the server closed the connection that held the WATCH before MULTI was sent; nothing of the transaction was sent): %w", ErrWatchLost, cerr)}
}

// borrowPinned borrows the connection a Conn's transaction is pinned to
// on node i. Nothing of the transaction has been sent yet: on a Sentinel
// shard whose master is marked down or cannot be reached (a failover
// under way) it waits for the new master within
// SentinelOptions.FailoverWait, as a command does, and then fails with
// the *RetryError that says so. Otherwise the error is a *NodeError.
func (c *Client) borrowPinned(ctx context.Context, i int) (*trackedConn, error) {
	var w sentinelTxWait
	for attempt := 0; ; attempt++ {
		ns := c.nodes.get(i)
		var err error
		if ns.down.Load() {
			err = ns.downErr()
		} else {
			var conn *trackedConn
			if conn, err = c.borrowTracked(ctx, ns.node.Addr); err == nil {
				return conn, nil
			}
			c.noteFailure(ctx, i, err) // as for a Do's (Stats, health)
		}
		nerr := &NodeError{Node: ns.node, Err: err}
		c.noteSentinelTxFailure(ctx, i, nerr)
		retry, ferr := c.retrySentinelTx(ctx, i, attempt, nerr, txNotRun, &w, "MULTI/EXEC")
		switch {
		case retry:
			continue
		case ferr != nil:
			return nil, ferr
		}
		return nil, nerr
	}
}

// watch handles WATCH: it pins the Conn to its keys' node.
func (f *flusher) watch(i int) {
	tx, cmd := &f.rc.tx, f.cmds[i]
	if tx.closing {
		f.sendPinned() // let the EXEC, DISCARD or UNWATCH before end its hold
	}
	keys, err := f.rc.c.commandKeys(f.ctx, cmd.name, cmd.args)
	if err == nil && len(keys) == 0 {
		err = fmt.Errorf("%w: WATCH needs a key", ErrBadCommand)
	}
	if err == nil && tx.conn == nil {
		err = f.pinFor(keys[0]) // migrate_tx.go
	}
	if err == nil {
		err = f.rc.sameGroup(cmd, keys)
	}
	if err == nil {
		err = f.moveKeys(cmd) // before WATCH: the move itself would touch the key
	}
	if err != nil {
		f.res[i] = Result{Err: err}
		return
	}
	f.addPinned(i)
}

// checkTx checks, before anything of it is sent, that every key of the
// transaction that starts at command from (up to EXEC or DISCARD, or the
// end of this flush) is in one group: the pinned one, or the first key's.
func (f *flusher) checkTx(from int) error {
	rc := f.rc
	group, first := -1, ""
	if rc.tx.conn != nil {
		group, first = rc.tx.group, "(watched)"
	}
	for j := from; j < len(f.cmds); j++ {
		cmd := f.cmds[j]
		switch lowerName(cmd.name) {
		case "exec", "discard":
			return nil
		case "multi", "watch":
			continue
		case "select": // another database: refused before anything is sent
			if err := rc.c.selectRefusal(cmd.args); err != nil {
				return err
			}
			continue
		}
		keys, err := f.txKeys(cmd)
		if err != nil {
			return err
		}
		for _, k := range keys {
			_, g, err := rc.txLoc().locate(k)
			if err != nil {
				return err
			}
			if group < 0 {
				group, first = g, keyString(k)
				continue
			}
			if g != group {
				return &CrossShardError{Command: "MULTI ... EXEC", Keys: []KeyOwner{
					{Key: first, Owner: rc.txLoc().groupLabel(group)},
					{Key: keyString(k), Owner: rc.txLoc().groupLabel(g)},
				}}
			}
		}
	}
	return nil
}

// txKeys returns the keys of a command inside MULTI. A command whose
// arguments are malformed has none: it goes to the server, which refuses
// to queue it, and EXEC then fails with EXECABORT as on one server. A
// command the table does not know is refused: its keys cannot be checked.
func (f *flusher) txKeys(cmd connCmd) ([]any, error) {
	keys, err := f.rc.c.txPlaceKeys(f.ctx, cmd.name, cmd.args) // a PUBLISH's channel too
	if errors.Is(err, ErrBadCommand) {
		return nil, nil
	}
	return keys, err
}

// sameGroup checks that every key of cmd is in the pinned group.
func (rc *routedConn) sameGroup(cmd connCmd, keys []any) error {
	for _, k := range keys {
		_, g, err := rc.txLoc().locate(k)
		if err != nil {
			return err
		}
		if g != rc.tx.group {
			return &CrossShardError{Command: strings.ToUpper(cmd.name), Keys: []KeyOwner{
				{Key: keyString(k), Owner: rc.txLoc().groupLabel(g)},
				{Key: "(transaction)", Owner: rc.txLoc().groupLabel(rc.tx.group)},
			}}
		}
	}
	return nil
}

// inPinnedGroup reports whether every key of a command (which has keys)
// is in the pinned group.
func (f *flusher) inPinnedGroup(cmd connCmd) bool {
	keys, err := f.rc.c.commandKeys(f.ctx, cmd.name, cmd.args)
	if err != nil || len(keys) == 0 {
		return false
	}
	return f.rc.sameGroup(cmd, keys) == nil
}

// refuse refuses the transaction in progress as a whole: the commands
// already queued on the server are discarded with the connection, the
// ones of this flush are never sent, and everything up to EXEC or DISCARD
// fails with err.
func (f *flusher) refuse(err error) {
	tx := &f.rc.tx
	// Drop what this flush would have sent to the transaction's node.
	for _, idx := range f.pinned {
		if idx >= 0 {
			f.res[idx] = Result{Err: err}
		}
	}
	f.pinned, f.pinnedAt, f.pinnedIn = f.pinned[:0], f.pinnedAt[:0], f.pinnedIn[:0]
	for _, h := range f.held {
		f.res[h] = Result{Err: err}
	}
	f.held = f.held[:0]
	if f.multiAt >= 0 {
		f.res[f.multiAt] = Result{Err: err}
		f.multiAt = -1
	}
	if tx.conn != nil {
		tx.conn.markDirty() // closing it discards what the server queued
		tx.conn.release()
		tx.conn = nil
	}
	tx.refused, tx.lost = err, nil
}

// refuseHeld refuses a transaction whose keyless commands came before
// any key: its node cannot be known.
func (f *flusher) refuseHeld() {
	cmd := f.cmds[f.held[0]]
	f.refuse(fmt.Errorf("%w: %s inside MULTI before any key: a Conn runs a transaction on the node of its first key", ErrNoKey, strings.ToUpper(cmd.name)))
}

// answerMulti gives a MULTI of this flush that was not sent its reply.
func (f *flusher) answerMulti() {
	if f.multiAt >= 0 {
		f.res[f.multiAt] = Result{Reply: "OK"}
		f.multiAt = -1
	}
}

// endOfFlush sends what is left; a MULTI still without a key is
// answered, and keyless commands held for a key refuse the transaction.
func (f *flusher) endOfFlush() {
	if len(f.held) > 0 {
		f.refuseHeld()
	}
	f.answerMulti()
	f.sendRuns()
	if tx := &f.rc.tx; tx.conn != nil && !tx.multi && !tx.watched {
		// Every WATCH that pinned the Conn was refused (MOVED, NOPERM,
		// ...): nothing is watched on the server, so nothing holds the
		// connection, and the next command is routed afresh (to a moved
		// slot's new owner) instead of to it.
		lost := tx.lost
		tx.finish()
		tx.lost = lost
	}
}

func (f *flusher) addPlain(i int) {
	f.sendPinned()
	f.plain = append(f.plain, i)
}

func (f *flusher) addPinned(i int) {
	f.sendPlain()
	f.pinned = append(f.pinned, i)
	f.pinnedAt = append(f.pinnedAt, f.cmds[i])
	f.pinnedIn = append(f.pinnedIn, f.rc.tx.multi)
}

func (f *flusher) sendRuns() {
	f.sendPlain()
	f.sendPinned()
}

// sendPlain sends the routed run as one pipeline, or a run of one command
// as Client.Do does: the hooks then see that command's operation
// (Op.Name is its name), not a PIPELINE of one.
func (f *flusher) sendPlain() {
	switch len(f.plain) {
	case 0:
		return
	case 1:
		cmd := f.cmds[f.plain[0]]
		reply, err := f.rc.c.do(f.ctx, cmd.name, cmd.args, nil)
		f.res[f.plain[0]] = Result{Reply: reply, Err: err}
		f.plain = f.plain[:0]
		return
	}
	p := f.rc.c.Pipeline()
	for _, i := range f.plain {
		p.Send(f.cmds[i].name, f.cmds[i].args...)
	}
	res, err := p.Exec(f.ctx)
	for k, i := range f.plain {
		if err != nil {
			f.res[i] = Result{Err: err}
		} else {
			f.res[i] = res[k]
		}
	}
	f.plain = f.plain[:0]
}

// sendPinned sends the transaction run on the transaction's connection.
func (f *flusher) sendPinned() {
	if len(f.pinned) == 0 {
		return
	}
	tx := &f.rc.tx
	pinned, cmds, in := f.pinned, f.pinnedAt, f.pinnedIn
	f.pinned, f.pinnedAt, f.pinnedIn = nil, nil, nil
	var run *connRun // what the hooks see of the run once it is sent (hooks_conn.go)
	set := func(k int, r Result) {
		run.result(k, r.Reply, r.Err)
		if pinned[k] >= 0 {
			f.res[pinned[k]] = r
		}
	}
	node := f.rc.c.nodes.get(tx.node).node
	// fail fails commands from on; those before upTo were written whole
	// (or may have been), so they may have run; the others were not
	// (nor what MULTI queued before an EXEC that was not).
	// multiRefused: the server refused the run's MULTI (its reply was
	// read): the commands after it ran outside any transaction.
	multiRefused := false
	lastMulti := -1 // the run's MULTI, whose reply the transaction's state follows
	fail := func(from int, err error, upTo int) {
		nerr := &NodeError{Node: node, Err: contextCause(f.ctx, err)}
		if !errors.Is(err, errNothingSent) && !errors.Is(err, errAfterProtocolError) {
			f.rc.c.noteSentinelTxFailure(f.ctx, tx.node, nerr)
		}
		unrun := nerr
		if writeFailed(err) {
			// Cut short by the failed write, or never written: not run,
			// and the error says so, as for a command sent by Do.
			unrun = &NodeError{Node: node, Err: fmt.Errorf("%w: %w", errNotWritten, nerr.Err)}
		}
		// lostWrite: the first command of the run that may have run
		// although its reply was lost (a write, an EXEC). The failures
		// after it wrap it, as does what the Conn refuses later for this
		// connection's loss (tx.refused, tx.lost): nothing of those ran,
		// but that command may have, even when its caller ignored its
		// error.
		var lostWrite *UnknownOutcomeError
		var failure error = nerr
		for k := from; k < len(cmds); k++ {
			var kerr error = unrun
			if k < upTo {
				// After a refused MULTI nothing is queued: what
				// followed it ran at once, a write of unknown outcome.
				queuedIn := in[k] && !(multiRefused && k > lastMulti)
				kerr = sentError(f.ctx, node, cmds[k], queuedIn, err)
			}
			// The hooks see each command's own failure: one after
			// lostWrite did not run, whatever lostWrite did.
			run.result(k, nil, kerr)
			if lostWrite != nil {
				kerr = afterLostWrite(kerr, lostWrite)
			} else if uo := (*UnknownOutcomeError)(nil); errors.As(kerr, &uo) {
				lostWrite = uo
				failure = afterLostWrite(nerr, uo)
			}
			if pinned[k] >= 0 {
				f.res[pinned[k]] = Result{Err: kerr}
			}
		}
		closing := tx.closing
		tx.conn.release() // failed: closed, never reused
		tx.conn = nil
		if tx.multi {
			tx.refused = failure
			return
		}
		watched, lost := tx.watched, tx.lost
		tx.finish()
		if lost != nil && !closing {
			// The keys were no longer watched before this connection
			// (an earlier one failed, perhaps with a write of unknown
			// outcome): that first refusal stays, with this failure's
			// write of unknown outcome when there is one.
			tx.lost = lost
			if lostWrite != nil {
				tx.lost = errtext.Errorf("%w (then: %w)", lost, failure)
			}
			return
		}
		// Once the run's MULTI was refused, the replies of the WATCHes
		// before it were read: watched tells whether any was in force.
		if !closing && (watched || !multiRefused) {
			// The watched keys are no longer watched: the next
			// MULTI ... EXEC fails rather than run unguarded, and its
			// error says why, around the connection's failure (the
			// same *NodeError, *UnknownOutcomeError and causes).
			tx.lost = errtext.Errorf("%w (the connection that held the WATCH failed): %w", ErrWatchLost, failure)
		}
	}
	if ctxEnded(f.ctx) != nil {
		// The context has ended: nothing of the run is written (the
		// connection would be closed only once it was on its way, and an
		// EXEC would run while its caller is told it was cancelled).
		fail(0, errNothingSent, 0) // wrapped with the context's error
		return
	}
	// A blocking command (BLPOP on a watched key, ...) is waited for as
	// long as it asked the server to block, plus the read timeout; not
	// between MULTI and EXEC, where the server answers QUEUED and EXEC
	// runs it without blocking. But a MULTI that the server refuses (an
	// ACL user without it) opens no transaction: what follows it runs at
	// once, a blocking command blocks, and its reply is waited for as
	// outside MULTI (unqueued). The MULTI's reply comes first and tells.
	calls := make([]*call, 0, len(cmds))
	all := make([]*call, 0, len(cmds))
	for k, cmd := range cmds {
		if lowerName(cmd.name) == "multi" {
			lastMulti = k
		}
		cl := &call{name: cmd.name, args: cmd.args, info: command.Lookup(cmd.name)}
		all = append(all, cl)
		if !in[k] {
			calls = append(calls, cl)
		}
	}
	timeout, err := f.rc.c.replyTimeout(f.ctx, calls)
	unqueued := timeout
	if err == nil && lastMulti >= 0 {
		unqueued, err = f.rc.c.replyTimeout(f.ctx, all)
	}
	if err != nil {
		fail(0, errNothingSent, 0)
		return
	}
	// The hooks run outside the fence (Start before the run enters it,
	// the others once it left, deferred first): a slow hook neither
	// holds the switch of a migration nor sends the run after it, to
	// the node of the topology it left.
	if ctx, r := f.rc.c.connRunStart(f.ctx, tx.node, tx.group, cmds); r != nil {
		if tx.conn != nil {
			r.server = f.rc.c.dialedServer(f.rc.c.nodes.get(tx.node).node, tx.conn.conn)
		}
		// The run goes with the context Start returned.
		saved := f.ctx
		f.ctx, run = ctx, r
		defer func() {
			f.ctx = saved
			run.end(ctx)
		}()
	}
	err = tx.fence.enter() // migrate_plan.go: nothing of the run is sent
	if err == nil && ringMoved(tx.fence.loc, tx.node, []any{tx.key}) {
		tx.fence.leave()
		err = errTxRingMoved
	}
	if err != nil {
		f.refuseFenced(pinned, err)
		for k, i := range pinned {
			if i >= 0 {
				run.result(k, f.res[i].Reply, f.res[i].Err)
			} else {
				run.result(k, nil, err)
			}
		}
		return
	}
	defer tx.fence.leave()
	f.rc.c.nodes.get(tx.node).commands.Add(int64(len(cmds))) // Stats, as for commands sent by Do
	// A write that fails stops before its end: the command whose Send
	// failed, or the last one when Flush did, was not written whole, and
	// those after it not at all; the server runs none of them (those
	// before may have run).
	unwritten := len(cmds)
	for k, cmd := range cmds {
		if err = tx.conn.Send(cmd.name, cmd.args...); err != nil {
			unwritten = k
			break
		}
	}
	if err == nil {
		if err = tx.conn.Flush(); err != nil {
			unwritten = len(cmds) - 1
		}
	}
	// The replies of the commands written whole before a write that the
	// server reset are still read: the server answered them before its
	// reset (a value over its proto-max-bulk-len is refused at once,
	// with a protocol error), and the pool's connection returns them, then
	// the reset, without waiting (readWritten in exec.go does the same).
	// So is the refusal of the command the write cut short: a protocol
	// error is the only reply the server sends to a command it did not
	// read whole. Only from the first one missing do they keep the
	// write's error.
	writeErr, replies := err, len(cmds)
	if err != nil {
		f.rc.c.noteTxFailure(f.ctx, tx.node, err) // as for a Do's (Stats, health)
		if !writeFailed(err) {
			fail(0, err, unwritten)
			return
		}
		replies = unwritten + 1
	}
	stop := context.AfterFunc(f.ctx, tx.conn.abort)
	defer stop()
	var answers txAnswers // what the replies say of the node
	var ahead *readAhead  // the reply after one that reads as a protocol error
	// unwatched: after the run's MULTI was refused, the server ran an
	// UNWATCH, EXEC or DISCARD that ended the watch (an EXEC or DISCARD
	// there is refused as one without MULTI, and the keys stay watched).
	unwatched := false
	for k := range replies {
		wait := timeout
		if in[k] && multiRefused {
			wait = unqueued
		}
		var reply any
		if r := ahead; r != nil {
			reply, err, ahead = r.reply, r.err, nil
		} else {
			reply, err = tx.conn.ReceiveWithTimeout(wait)
		}
		var re redis.Error
		if errors.As(err, &re) && isProtocolError(re) && k+1 < replies {
			// What follows it tells whether the server closed the
			// connection after it (readAhead): if not, it is the
			// command's own error reply, and those after it ran.
			next := timeout
			if in[k+1] && multiRefused {
				next = unqueued
			}
			r, rerr := tx.conn.ReceiveWithTimeout(next)
			ahead = &readAhead{reply: r, err: rerr}
			if !serverClosed(rerr) {
				tx.conn.notProtocolError()
			}
		}
		switch {
		case errors.As(err, &re) && isProtocolError(re) && (ahead == nil || serverClosed(ahead.err)):
			// The server closes the connection after this reply and
			// runs nothing written after the command: the rest of the
			// run fails unrun, not as writes of unknown outcome.
			set(k, Result{Err: re})
			tx.conn.markDirty()
			if ahead != nil && mayReadAsProtocolError(all[k]) {
				// Unless a script's (or a module's) command sent that
				// reply itself, and a kill of the connection lost the
				// replies of commands after it that ran: they may have
				// run (errClosedAfterLookalike), up to the first one
				// the write did not get to the server.
				upTo := len(cmds)
				if writeErr != nil {
					upTo = unwritten
				}
				fail(k+1, errtext.Errorf("%w: %w", errClosedAfterLookalike, ahead.err), upTo)
				return
			}
			fail(k+1, errAfterProtocolError, k+1)
			return
		case writeErr != nil && k >= unwritten:
			// The command the write cut short, not refused: it keeps
			// the write's error (it did not run), with those after it.
			fail(k, writeErr, unwritten)
			return
		case err == nil:
			set(k, Result{Reply: reply})
			answers.reply(cmds[k].name, nil)
			switch name := lowerName(cmds[k].name); {
			case !in[k] && name == "watch":
				tx.watched = true
			case k == lastMulti && tx.multi:
				tx.multiOK = true // what follows it is queued
			case multiRefused && k > lastMulti && (name == "unwatch" || name == "exec" || name == "discard"):
				unwatched = true
			}
		case errors.As(err, &re):
			f.noteMoved(re)
			f.rc.c.noteSentinelTxFailure(f.ctx, tx.node, re)
			rerr := f.rc.c.commandReplyError(tx.node, cmds[k].name, cmds[k].args, re)
			answers.reply(cmds[k].name, rerr)
			set(k, Result{Err: rerr})
			switch {
			case k == lastMulti && pinned[k] < 0:
				// Answered already, and sent alone (openMulti): the
				// caller's transaction is refused with this reply.
				f.multiRefusal = rerr
			case k == lastMulti:
				// Refused (an ACL user without MULTI): no transaction is
				// open on the server, whose EXEC or DISCARD would be
				// refused; what follows runs at once, as after a refused
				// MULTI on one server. The Conn's follows suit: the
				// connection stays held only for a WATCH.
				tx.multi, tx.multiOK, tx.multiSent = false, false, false
				multiRefused = true
			}
		case writeErr != nil:
			fail(k, writeErr, unwritten)
			return
		default:
			f.rc.c.noteTxFailure(f.ctx, tx.node, err)
			fail(k, err, len(cmds))
			return
		}
	}
	answers.note(f.rc.c, tx.node)
	if tx.closing && !tx.multi {
		if multiRefused && tx.watched && !unwatched {
			// The EXEC or DISCARD sent with the refused MULTI was
			// refused too, as one without MULTI: the keys stay
			// watched on the server, as on one connection to it, so
			// the Conn keeps the connection, and the WATCH guards its
			// next MULTI ... EXEC (UNWATCH ends it).
			tx.closing = false
			return
		}
		tx.finish()
	}
}

// noteMoved points the slot of a MOVED that a command of the
// transaction's run met at its new owner (in cluster mode): the Conn does
// not follow redirects inside a transaction, but the caller's next
// attempt goes to the new owner instead of meeting MOVED again until the
// next topology refresh.
func (f *flusher) noteMoved(re redis.Error) {
	c := f.rc.c
	if c.cl() == nil || cluster.ErrorCode(string(re)) != "MOVED" {
		return
	}
	ns := c.nodes.get(f.rc.tx.node)
	ns.moved.Add(1)
	if rd, ok := cluster.ParseRedirect(string(re), ns.node.Addr); ok && rd.Kind == cluster.Moved {
		c.applyMoved(rd.Slot, rd.Addr)
	}
	c.refresh(f.ctx, false)
}

// sentError is the error of a command of a transaction's run whose
// connection failed after it was written (in is true between MULTI and
// EXEC): when the caller's context ended the wait, one that says it may
// have run; else, for EXEC and for a write outside MULTI, an
// *UnknownOutcomeError, as for a write sent without a transaction.
func sentError(ctx context.Context, node Node, cmd connCmd, in bool, err error) error {
	ne := &NodeError{Node: node, Err: sentCause(ctx, err)}
	if errors.Is(ne.Err, context.Canceled) || errors.Is(ne.Err, context.DeadlineExceeded) {
		return ne
	}
	name := lowerName(cmd.name)
	info := command.Lookup(cmd.name)
	if name == "exec" || !in && mayWrite(info) && command.EffectOf(info, cmd.name, cmd.args) != command.Transaction {
		return &UnknownOutcomeError{Command: strings.ToUpper(cmd.name), Node: node, Err: ne}
	}
	return ne
}

// afterLostWrite is the failure err of a command of a Conn that came
// after lost, a command sent before it (on the same connection, for a
// transaction's) whose outcome is unknown: it wraps both, so that the
// caller sees that lost may have run although err's command did not.
func afterLostWrite(err error, lost *UnknownOutcomeError) error {
	return fmt.Errorf("%w (after an earlier command: %w)", err, lost)
}

// errNothingSent is the cause of a transaction run that was not written
// because its context had ended.
var errNothingSent = errors.New("nothing was sent")

// everyShard runs PING or ECHO on every shard and returns the reply they
// all gave, or the first failure.
func (rc *routedConn) everyShard(ctx context.Context, cmd connCmd) Result {
	nodes := rc.c.shardNodes() // those ForEachShard visits (a migration can change them)
	replies := make([]any, len(nodes))
	idx := make(map[string]int, len(nodes))
	for i, n := range nodes {
		idx[n.Addr] = i
	}
	err := rc.c.ForEachShard(ctx, func(ctx context.Context, n Node, conn redis.Conn) error {
		r, err := redis.DoContext(conn, ctx, cmd.name, cmd.args...)
		if re, ok := err.(redis.Error); ok {
			// As through Client.Do: a NOAUTH or WRONGPASS is an
			// authentication failure.
			if i, ok := rc.c.nodes.lookup(n.Addr); ok {
				err, _ = rc.c.replyError(i, re)
			} else {
				err = rc.c.authReply(n.Addr, re)
			}
		}
		if err != nil {
			return err
		}
		replies[idx[n.Addr]] = r
		return nil
	})
	if err != nil {
		return Result{Err: err}
	}
	if len(replies) == 0 {
		return Result{Err: ErrNoNodes}
	}
	return Result{Reply: replies[0]}
}

// selectDB answers SELECT: the configured database only.
func (rc *routedConn) selectDB(args []any) Result {
	if err := rc.c.selectRefusal(args); err != nil {
		return Result{Err: err}
	}
	return Result{Reply: "OK"}
}

// selectRefusal returns nil for a SELECT of the database the client is
// configured for (Pool.DB), which changes nothing, and a *ConnStateError
// for any other: the client routes and reads every key in that database.
func (c *Client) selectRefusal(args []any) error {
	if len(args) == 1 {
		if s, ok := command.Arg(args[0]); ok {
			if db, err := strconv.Atoi(s); err == nil && db == c.cfg.Pool.DB {
				return nil
			}
		}
	}
	return &ConnStateError{Command: "SELECT", Effect: command.Database,
		Hint: fmt.Sprintf("the client's commands run on pooled connections to database %d (Pool.DB): only SELECT %d succeeds; use a client configured for the other database", c.cfg.Pool.DB, c.cfg.Pool.DB)}
}

// connTx is a routedConn's transaction: the connection it holds while
// WATCH or MULTI is in force.
type connTx struct {
	conn      *trackedConn // nil until the transaction's node is known
	node      int
	group     int
	multi     bool  // inside MULTI
	multiSent bool  // MULTI went to conn
	multiOK   bool  // the server's +OK to that MULTI was read
	watched   bool  // a WATCH on conn was accepted
	closing   bool  // EXEC, DISCARD or UNWATCH was sent: release after its run
	refused   error // the transaction was refused: everything up to EXEC fails with it
	// lost: the connection that held WATCH failed; the next MULTI is
	// refused with it (until UNWATCH, or EXEC or DISCARD of that MULTI).
	lost error
	// fence: planned by a migration's old topology (migrate_plan.go).
	fence txPlan
	// key placed the transaction on node (pinFor): when auto-eject moves
	// it to another shard, the transaction is refused (ring_view.go).
	key any
}

// finish ends the transaction after EXEC, DISCARD or UNWATCH: its
// connection goes back to the pool (restored or closed by release).
func (tx *connTx) finish() {
	if tx.conn != nil {
		tx.conn.release()
	}
	*tx = connTx{}
}

// end abandons the transaction (Close, RESET, QUIT): the same as finish.
func (tx *connTx) end() { tx.finish() }
