package shard

import (
	"context"
	"errors"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/cluster"
)

// A slot of the cluster that keys move into may move to another master
// for good after the client read the cluster's map. A MIGRATE to the
// slot's former master then fails: the target refuses the RESTORE of the
// slot's keys with MOVED, and MIGRATE answers "ERR Target instance replied
// with error: MOVED <slot> <addr>" and leaves them at their old owner
// (the keys of the same MIGRATE that the target took have moved). Nothing
// of the caller's command was sent. moveFirst follows the MOVED as a
// cluster client does with a command's own: the slot's new master goes
// into the client's table (applyMoved), which routes the slot's later
// commands too, the calls on keys of that slot are pointed at it, and the
// failed calls are planned again; those of other slots (in the same
// MIGRATE) go to the same master as before, where their keys either moved
// already (NOKEY) or move now. At most the cluster's MaxRedirects times
// for one batch; past that, the calls keep their *MigrateError wrapping a
// *RetryError (ErrRetryBudget).
//
// A slot being moved inside the cluster (MIGRATING at its owner, IMPORTING
// at another master) makes its owner refuse the RESTORE of a key it does
// not hold with ASK: a new key of the slot belongs at the importing master.
// MIGRATE from a server out of cluster mode sends a plain RESTORE, which
// the importing master refuses without ASKING, so the key is moved by the
// client instead (moveAsked, migrate_cluster_target_ask.go): DUMP at the
// old owner, ASKING and RESTORE at the importing master, DEL at the old
// owner, as MIGRATE does; the slot's table entry stays, as a cluster client
// keeps it after an ASK, and the command then meets the ASK of the owner
// and follows it.

// targetMovedPrefix begins the error of a MIGRATE whose target refused a
// key; the target's own error follows it.
const targetMovedPrefix = "ERR Target instance replied with error: "

// targetMoved returns the MOVED redirect with which the target of a
// MIGRATE refused the move of cl's key (cl.err, a *MigrateError whose
// command was not sent), and the error.
func targetMoved(cl *call) (*MigrateError, cluster.Redirect, bool) {
	me, ok := cl.err.(*MigrateError)
	if !ok || me.Sent {
		return nil, cluster.Redirect{}, false
	}
	var rte *RetryError
	if errors.As(me.Err, &rte) {
		return nil, cluster.Redirect{}, false // the budget is spent
	}
	var re redis.Error
	if !errors.As(me.Err, &re) || !strings.HasPrefix(string(re), targetMovedPrefix) {
		return nil, cluster.Redirect{}, false
	}
	rd, ok := cluster.ParseRedirect(strings.TrimPrefix(string(re), targetMovedPrefix), me.To.Addr)
	if !ok {
		return nil, cluster.Redirect{}, false
	}
	return me, rd, true
}

// isTargetMoved reports whether err, a MIGRATE's, says that its target
// refused a key with MOVED or ASK.
func isTargetMoved(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && (strings.HasPrefix(string(re), targetMovedPrefix+"MOVED ") ||
		strings.HasPrefix(string(re), targetMovedPrefix+"ASK "))
}

// followTargetMoved follows the MOVED and ASK replies with which the
// client's own cluster refused the moves of calls' keys (hop is how many
// passes moveFirst has made), and returns the calls to plan again, their
// errors cleared. A client that does not route by a cluster has none.
func (c *Client) followTargetMoved(ctx context.Context, m *migState, calls []*call, hop int) []*call {
	if c.cl() == nil {
		return nil
	}
	limit := c.clusterOpts().MaxRedirects
	var redo []*call
	for _, cl := range calls {
		me, rd, ok := targetMoved(cl)
		if !ok || !c.cl().lists(me.To.Addr) {
			continue // not a master of the client's cluster: not its slot map
		}
		var re redis.Error
		errors.As(me.Err, &re)
		if hop > limit {
			cl.err = &MigrateError{Key: me.Key, From: me.From, To: me.To, Err: &RetryError{
				Command: strings.ToUpper(cl.name), Attempts: hop, Last: string(re) + " (too many redirects)", Err: me.Err}}
			m.failures.Add(1)
			continue
		}
		if rd.Kind == cluster.Ask {
			// The keys of the slot move to the importing master now; the
			// call, planned again, finds them moved (m.moved).
			if err := c.moveAsked(ctx, m, cl, me, rd); err != nil {
				cl.err = &MigrateError{Key: me.Key, From: me.From, To: Node{Name: rd.Addr, Addr: rd.Addr}, Err: err}
				m.failures.Add(1)
				continue
			}
			cl.err, cl.done = nil, false
			redo = append(redo, cl)
			continue
		}
		node := c.applyMoved(rd.Slot, rd.Addr)
		if cluster.Slot(me.Key) == rd.Slot {
			cl.node = node
		}
		cl.err, cl.done = nil, false
		redo = append(redo, cl)
	}
	return redo
}
