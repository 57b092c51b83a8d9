package shard

import (
	"cmp"
	"context"
	"errors"
)

// moveCommandKeys brings the keys of one command of a transaction to node,
// its owner under the current topology, before the command runs on the
// transaction's connection there. Client.Tx moves the keys it watches
// before WATCH; the other keys its commands (and a Conn's) touch would
// otherwise be read or written at the new owner while their value still
// sits at the old one. Nothing happens outside a migration.
//
// A SORT or SORT_RO whose BY or GET patterns name keys that may still sit
// at their old owner is refused with a *MigrateError, as outside a
// transaction (sortPatternsMove): those keys cannot be moved first.
func (c *Client) moveCommandKeys(ctx context.Context, node int, name string, args []any) error {
	if c == nil {
		return nil
	}
	m := c.mig.Load()
	if m == nil {
		return nil
	}
	if err := c.sortPatternsAt(m, node, name, args); err != nil {
		return err
	}
	keys, err := c.commandKeys(ctx, name, args)
	if err != nil || len(keys) == 0 {
		return nil // checked by the caller; a malformed command goes to the server
	}
	return c.moveKeys(ctx, node, keys)
}

// sortPatternsAt is sortPatternsMove for a command of a transaction on
// node, in migration m: nothing is refused while m routes by the old
// topology, where the patterns' keys still are; a rollback not fenced yet
// checks the migration it turns around, whose moves go on (moveFirst).
func (c *Client) sortPatternsAt(m *migState, node int, name string, args []any) error {
	info := lookupCommand(name)
	if info == nil || (info.Name != "sort" && info.Name != "sort_ro") {
		return nil
	}
	if m.phase.Load() == int32(PhaseWaiting) {
		if m.prev == nil {
			return nil
		}
		m = m.prev
	}
	return sortPatternsMove(m, &call{name: name, args: args, info: info}, c.nodes.get(node).node)
}

// moveKeys is moveCommandKeys for a command of a Conn's transaction.
func (f *flusher) moveKeys(cmd connCmd) error {
	return f.rc.c.moveCommandKeys(f.ctx, f.rc.tx.node, cmd.name, cmd.args)
}

// txLoc is the locator of a Conn's transaction: the one its node was
// picked by (the old topology when planned before the migration's fence
// switched), else the client's.
func (rc *routedConn) txLoc() locator {
	if l := rc.tx.fence.loc; l != nil {
		return l
	}
	return rc.c.loc
}

// pinFor picks the node of a Conn's transaction by key, by the topology
// the migration's fence allows (migrate_plan.go), and pins it there.
func (f *flusher) pinFor(key any) error {
	plan := f.rc.c.planTx()
	node, group, err := plan.loc.locate(key)
	if err != nil {
		return err
	}
	if err := f.pin(node, group); err != nil {
		return err
	}
	f.rc.tx.fence, f.rc.tx.key = plan, key
	return f.openMulti() // sent by the fence just set
}

// refuseFenced fails a run of a Conn's transaction that was planned by the
// old topology and would be sent after the fence's switch: nothing of it
// is sent, its connection goes back as a fresh one, and, inside MULTI,
// everything up to EXEC fails with err (EXEC too: the transaction did not
// run); outside, the next MULTI is refused with it, as when a watching
// connection is lost.
func (f *flusher) refuseFenced(pinned []int, err error) {
	tx := &f.rc.tx
	for _, i := range pinned {
		if i < 0 {
			continue
		}
		switch lowerName(f.cmds[i].name) {
		case "discard", "unwatch": // what they ask for is done: nothing stays open
			f.res[i] = Result{Reply: "OK"}
		default:
			f.res[i] = Result{Err: err}
		}
	}
	switch {
	case tx.closing: // the run ends the transaction (EXEC, DISCARD, UNWATCH)
		tx.finish()
	case tx.multi:
		tx.conn.release()
		tx.conn = nil
		tx.refused = err
	default:
		// An earlier loss of the watching connection stays the refusal:
		// it may wrap a write whose outcome is unknown, which the
		// switch's error, matching ErrTxAborted, would hide.
		lost := tx.lost
		tx.finish()
		tx.lost = cmp.Or(lost, err)
	}
}

// txFenceRetry reports whether Client.Tx should run a transaction again:
// it was planned by the old topology and refused, before anything of it
// was sent, because the fence switched (errTxFenced) or auto-eject moved
// its keys to another shard (errTxRingMoved). The next attempt is planned
// by the new topology. attempt bounds it (a switch happens once per
// migration; a rollback adds one more; a shard that flaps faster than
// transactions run leaves the caller the error, which matches
// ErrTxAborted).
func (c *Client) txFenceRetry(err error, attempt int) bool {
	return err != nil && attempt < 8 && (errors.Is(err, errTxFenced) || errors.Is(err, errTxRingMoved))
}
