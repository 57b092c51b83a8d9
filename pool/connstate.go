package pool

import (
	"errors"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard/command"
)

// A connection goes back to its pool after any command, and the next Get
// hands it to another caller. redigo's pool undoes what WATCH, MULTI,
// SUBSCRIBE and PSUBSCRIBE leave behind and closes a connection that ran
// MONITOR; every other command that changes the connection itself
// (command.EffectOf) marks it, as does an ASKING that no command followed,
// a WATCH that redigo believes ended (noteTx) and an UNSUBSCRIBE,
// PUNSUBSCRIBE or SUNSUBSCRIBE whose replies redigo does not read
// (noteSubscription), and the borrow check
// (dialer.ping) closes a marked connection instead of handing it out: a
// fresh one is dialled.

// errStateChanged rejects, when it is borrowed again, a connection whose
// state a caller changed beyond what the pool restores.
var errStateChanged = errors.New("shardis: connection state changed by its last user (SELECT, SSUBSCRIBE, CLIENT TRACKING, ...)")

// leavesState reports whether the command cmd with args leaves its
// connection in a state that a fresh one does not have and that redigo's
// pool does not undo: what command.EffectOf classes as setting state,
// changing the database or protocol or silencing replies, SYNC, PSYNC
// and REPLCONF (a replica's link's), and SSUBSCRIBE,
// except ASKING, which lasts until the next command (noteSent). QUIT
// counts too: the server closes the connection only after its reply, and
// that close may not have arrived when the connection is next borrowed;
// so do the commands that may close the connection that sends them once
// its reply is out (command.Disconnects: CLIENT KILL, ACL DELUSER, ACL
// LOAD).
// It costs a length comparison for most commands: it runs for every
// command sent.
func leavesState(cmd string, args []any) bool {
	switch len(cmd) {
	case 3:
		return strings.EqualFold(cmd, "acl") && command.EffectOf(nil, cmd, args) != command.Stateless
	case 4:
		return strings.EqualFold(cmd, "auth") || strings.EqualFold(cmd, "quit") || strings.EqualFold(cmd, "sync")
	case 5:
		return strings.EqualFold(cmd, "reset") || strings.EqualFold(cmd, "psync") ||
			strings.EqualFold(cmd, "hello") && command.EffectOf(nil, cmd, args) != command.Stateless
	case 6:
		return strings.EqualFold(cmd, "select") ||
			strings.EqualFold(cmd, "client") && command.EffectOf(nil, cmd, args) != command.Stateless ||
			strings.EqualFold(cmd, "script") && command.EffectOf(nil, cmd, args) != command.Stateless
	case 8:
		return strings.EqualFold(cmd, "readonly") || strings.EqualFold(cmd, "replconf")
	case 9:
		return strings.EqualFold(cmd, "readwrite")
	case 10:
		return strings.EqualFold(cmd, "ssubscribe")
	}
	return false
}

// noteSent marks c for a command sent on it: changed when the command
// leaves state (leavesState); asking after ASKING, until any other
// command is sent, which consumes the flag on the server too (a command
// of the pool's own, such as the borrow check's PING, included); the
// transaction's state (noteTx); and subscribed after a command of the
// SUBSCRIBE family (subscription; liveConn.next, answer).
func (c *liveConn) noteSent(cmd string, args []any) {
	if leavesState(cmd, args) {
		c.changed.Store(true)
	}
	c.noteBlocking(cmd, args) // before noteTx: only a MULTI sent earlier makes it queued
	c.noteTx(cmd)
	if len(cmd) >= 9 && len(cmd) <= 12 && subscription(cmd) {
		c.noteSubscription(cmd)
	}
	if len(cmd) == 6 && strings.EqualFold(cmd, "asking") {
		c.asking.Store(true)
	} else if c.asking.Load() {
		c.asking.Store(false)
	}
}

// noteSubscription notes a command of the SUBSCRIBE family
// (subscription) sent on c. Its replies may outnumber it: one per name
// (an unsubscribe without names: one per subscription, at least one),
// even on a connection that has no subscription. redigo's return reads every one of them after SUBSCRIBE
// or PSUBSCRIBE (up to the reply of an ECHO it sends last), so such a
// connection is noted as drained; after an unsubscribe alone it reads
// none, and the replies left would reach the next caller as its own
// whenever they arrive after the borrow check, which drops only those
// already received (closedByPeer): the connection is marked changed.
// SSUBSCRIBE leaves state that redigo does not undo (leavesState).
func (c *liveConn) noteSubscription(cmd string) {
	if !c.subscribed.Load() {
		c.subscribed.Store(true)
	}
	switch {
	case len(cmd) <= 10 && cmd[0]|0x20 != 's': // SUBSCRIBE, PSUBSCRIBE
		c.drained.Store(true)
	case len(cmd) >= 11 && !c.drained.Load(): // an unsubscribe
		c.changed.Store(true)
	}
}

// subscription reports whether cmd is SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE
// or one of their UNSUBSCRIBE commands, which get one reply per channel
// (one for none, when nothing is subscribed), not one per command.
func subscription(cmd string) bool {
	if strings.EqualFold(cmd, "subscribe") {
		return true
	}
	if len(cmd) > 0 && (cmd[0]|0x20 == 'p' || cmd[0]|0x20 == 's') {
		cmd = cmd[1:]
	}
	return strings.EqualFold(cmd, "subscribe") || strings.EqualFold(cmd, "unsubscribe")
}

// noteTx follows WATCH and MULTI as the server does: EXEC and DISCARD
// end both only inside MULTI (without it the server refuses them and the
// keys stay watched), UNWATCH inside MULTI is only queued, and WATCH
// inside MULTI is refused, as is a nested MULTI (the first stays open),
// and RESET ends both at once. It assumes the server accepts the MULTI,
// EXEC, DISCARD and UNWATCH it follows; the replies tell when it did not
// (answer, refusedTx). redigo's pool, which clears its own record of
// them at any EXEC or DISCARD, sends UNWATCH or DISCARD on return only
// when that record says so; a connection whose keys are still watched
// after that is closed by the borrow check instead.
func (c *liveConn) noteTx(cmd string) {
	switch len(cmd) {
	case 4:
		if strings.EqualFold(cmd, "exec") {
			c.endTx()
		}
	case 5:
		switch {
		case strings.EqualFold(cmd, "watch"):
			if !c.multi.Load() {
				c.watching.Store(true)
			}
		case strings.EqualFold(cmd, "multi"):
			if !c.multi.Load() { // a nested one is refused, the first stays
				c.multiAt.Store(c.sent)
				c.multi.Store(true)
			}
		case strings.EqualFold(cmd, "reset"):
			// RESET is not queued: it ends the transaction and the
			// watch at once.
			c.multi.Store(false)
			c.watching.Store(false)
		}
	case 7:
		switch {
		case strings.EqualFold(cmd, "discard"):
			c.endTx()
		case strings.EqualFold(cmd, "unwatch"):
			if !c.multi.Load() {
				c.unwatchAt.Store(c.sent)
				c.watching.Store(false)
			}
		}
	}
}

// endTx notes an EXEC or DISCARD: inside MULTI it ends the transaction
// and the watch (unless the server refuses it: refusedTx); without it
// the server refuses it.
func (c *liveConn) endTx() {
	if c.multi.Load() {
		c.endAt.Store(c.sent)
		c.multi.Store(false)
		c.watching.Store(false)
	}
}

// refusedTx notes the server's refusal of the MULTI that noteTx took
// for a transaction's start, of the EXEC or DISCARD it took for its
// end, or of the UNWATCH it took for the watch's end (the pool's
// return's included): an ACL user without the command, a wrong argument
// count. After a refused UNWATCH the keys stay watched. After a
// refused MULTI there is no transaction, so the EXEC or DISCARD after
// it (the pool's return's included) is refused as well and the keys
// watched before or after it stay watched, a WATCH after it having been
// taken for one inside MULTI; after a refused DISCARD (or an EXEC
// refused by a server that keeps the transaction open) the
// transaction stays open, and the next caller's commands would be
// queued in it. Neither is what the pool restores: the connection is
// marked changed (the receiving goroutine's, read by the borrow check).
func (c *liveConn) refusedTx() {
	c.changed.Store(true)
}

// leftState reports whether c's last user left it in a state that a
// fresh connection does not have.
func (c *liveConn) leftState() bool {
	return c.changed.Load() || c.asking.Load() || c.watching.Load() || c.multi.Load()
}

// protocolErrorReply reports whether e is the server's protocol error (a
// value over proto-max-bulk-len, say): the server closes the connection
// after sending it and reads nothing more from it, but that close may
// arrive after the connection was given back and borrowed again. The
// connection is marked as changed, so that no other caller gets it.
func protocolErrorReply(e redis.Error) bool {
	return strings.HasPrefix(string(e), "ERR Protocol error")
}
