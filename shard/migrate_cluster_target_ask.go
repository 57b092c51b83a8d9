package shard

import (
	"context"
	"errors"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/shard/command"
)

// moveAsked moves the keys of call cl that are in the slot of the ASK rd
// (with which the owner of that slot in the client's cluster refused, in
// me, the RESTORE of a MIGRATE) to the importing master rd names, each
// from its old owner (moveAskedKey), and notes them as moved. Keys noted
// as moved already are left alone.
func (c *Client) moveAsked(ctx context.Context, m *migState, cl *call, me *MigrateError, rd cluster.Redirect) error {
	to := c.nodes.add(Node{Name: rd.Addr, Addr: rd.Addr})
	for _, k := range askedKeys(cl, me.Key, rd.Slot) {
		if m.moved.has(k) {
			continue
		}
		src, err := m.from.Route(k)
		if err != nil {
			return err
		}
		if err := c.moveAskedKey(ctx, m, c.srcIndex(m, src), to, k); err != nil {
			return err
		}
		m.moved.add(k)
	}
	return nil
}

// askedKeys returns the keys of cl in slot, key (the one a MIGRATE's error
// named) first.
func askedKeys(cl *call, key string, slot int) []string {
	keys := []string{key}
	if cl.info == nil {
		return keys
	}
	pos, err := cl.info.KeyPositions(cl.args, nil)
	if err != nil {
		return keys
	}
	for _, p := range pos {
		if k, ok := command.Arg(cl.args[p]); ok && k != key && cluster.Slot(k) == slot {
			keys = append(keys, k)
		}
	}
	return keys
}

// moveAskedKey moves key k from its old owner (node index src) to the
// importing master of its slot (node index to) as MIGRATE would, were it
// able to send ASKING: its value and remaining time to live are read at
// the old owner in one transaction (DUMP, PTTL), restored at the importing
// master after ASKING (RESTORE without REPLACE), and the old copy is then
// deleted. A key gone from the old owner was moved or deleted meanwhile
// (another process moved it first): nothing to do. A key the importing
// master holds already (BUSYKEY) keeps that copy, the newer one (every
// writer of a moving key writes at its new owner once it moved), and the
// old copy is deleted, as after a MIGRATE's BUSYKEY (settleBusy). Any
// other failure leaves the key at its old owner, and is returned.
//
// Unlike MIGRATE, the three steps do not run on the old owner's thread at
// once; under the migration's protocol nobody writes the old copy, and
// whoever writes the key at the importing master has deleted the old copy
// first (the same steps, their RESTORE answering BUSYKEY), so a read at
// the old owner in between sees the value restored.
func (c *Client) moveAskedKey(ctx context.Context, m *migState, src, to int, k string) error {
	cut := &m.activeCut.over
	dump := []*call{
		{name: "MULTI", node: src, cut: cut},
		{name: "DUMP", args: []any{k}, node: src, cut: cut},
		{name: "PTTL", args: []any{k}, node: src, cut: cut},
		{name: "EXEC", node: src, cut: cut},
	}
	c.runSide(ctx, dump, c.runPooled)
	for _, d := range dump {
		if d.err != nil {
			return d.err
		}
	}
	vs, ok := dump[3].reply.([]any)
	if !ok || len(vs) != 2 {
		return errAskedDump
	}
	payload, _ := vs[0].([]byte)
	ttl, _ := vs[1].(int64)
	if payload == nil || ttl == -2 {
		return nil // gone: moved, deleted or expired meanwhile
	}
	ttl = max(ttl, 0) // -1: no expiry
	restore := &call{name: "RESTORE", args: []any{k, ttl, payload}, node: to, asking: true, cut: cut}
	c.runSide(ctx, []*call{restore}, c.runPooled)
	busy := isBusyKey(restore.err)
	if restore.err != nil && !busy {
		return restore.err
	}
	del := &call{name: "DEL", args: []any{k}, node: src, cut: cut}
	c.runSide(ctx, []*call{del}, c.runPooled)
	if del.err != nil {
		return del.err
	}
	switch n, _ := del.reply.(int64); {
	case !busy:
		m.moves.Add(1)
	case n > 0:
		m.busy.Add(1) // the old copy was deleted, the new owner's kept
	}
	return nil
}

// errAskedDump is the error of a move to an importing master whose DUMP
// transaction at the old owner did not answer with DUMP's and PTTL's
// replies.
var errAskedDump = errors.New("shardis: the DUMP of a key to move to an importing master did not run")
