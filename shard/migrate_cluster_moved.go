package shard

import (
	"errors"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/cluster"
)

// A slot of the old cluster may move to another master for good (keys
// moved, CLUSTER SETSLOT ... NODE on every master) after the client read
// the cluster's map, which it does not refresh on its own while it moves
// keys out. The slot's former master then answers MOVED to every command
// on the slot's keys that the client sends there: a read alone, a read's
// transaction (its EXISTS), a MIGRATE (queued in its transaction) or the
// DEL of a busy key's old copy. None of them ran. moveFirst follows the
// MOVED as a cluster client does: it writes the new owner into the old
// cluster's table (applyMovedHere), which routes the slot's later
// commands too, and plans the calls the MOVED failed again, which then
// read or move their keys at the slot's new master. At most the old
// cluster's MaxRedirects times for one batch; past that, the calls fail
// with a *MigrateError wrapping a *RetryError (ErrRetryBudget), and
// nothing has moved.

// oldMoved returns the MOVED redirect with which a master of the old
// cluster of a migration refused the move of cl's key (cl.err, a
// *MigrateError whose command was not sent), and that error.
func oldMoved(cl *call) (*MigrateError, redis.Error, cluster.Redirect, bool) {
	me, ok := cl.err.(*MigrateError)
	if !ok || me.Sent {
		return nil, "", cluster.Redirect{}, false
	}
	var rte *RetryError
	if errors.As(me.Err, &rte) {
		return nil, "", cluster.Redirect{}, false // the budget is spent
	}
	var re redis.Error
	if !errors.As(me.Err, &re) || cluster.ErrorCode(string(re)) != "MOVED" {
		return nil, "", cluster.Redirect{}, false
	}
	rd, ok := cluster.ParseRedirect(string(re), me.From.Addr)
	if !ok || rd.Kind != cluster.Moved {
		return nil, "", cluster.Redirect{}, false
	}
	return me, re, rd, true
}

// isMovedReply reports whether err is a MOVED reply.
func isMovedReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && cluster.ErrorCode(string(re)) == "MOVED"
}

// followOldMoved follows the MOVED replies that the old cluster of m gave
// to calls (hop is how many passes moveFirst has made): each slot's new
// master goes into the old cluster's table, and the calls are returned,
// their errors cleared, to be planned again. Past the cluster's
// MaxRedirects, they keep a *MigrateError wrapping a *RetryError and none
// is returned. A migration whose old topology is not a cluster has none.
func (c *Client) followOldMoved(m *migState, calls []*call, hop int) []*call {
	old, ok := m.from.(*ClusterRouter)
	if !ok {
		return nil
	}
	limit := defaultClusterOptions.MaxRedirects
	if old.opts != nil {
		limit = old.opts.MaxRedirects
	}
	var redo []*call
	for _, cl := range calls {
		me, re, rd, ok := oldMoved(cl)
		if !ok {
			continue
		}
		if hop > limit {
			cl.err = &MigrateError{Key: me.Key, From: me.From, To: me.To, Err: &RetryError{
				Command: strings.ToUpper(cl.name), Attempts: hop, Last: string(re) + " (too many redirects)", Err: me.Err}}
			m.failures.Add(1)
			continue
		}
		c.applyMovedHere(old, rd.Slot, rd.Addr)
		cl.err, cl.done = nil, false
		redo = append(redo, cl)
	}
	return redo
}

// movedAtOld reports whether err, the reply of a master of the old
// topology of m, is a MOVED of an old cluster.
func movedAtOld(m *migState, err error) bool {
	_, ok := m.from.(*ClusterRouter)
	return ok && isMovedReply(err)
}

// failMoved fails the read r, tried at its keys' old owner, with the
// MOVED that owner answered, for followOldMoved to follow.
func failMoved(r *oldRead, moved error) {
	r.cl.err = &MigrateError{Key: r.keys[0], From: r.src, To: r.dst, Err: moved}
	r.cl.done = true
}
