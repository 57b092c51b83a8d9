package shard

import (
	"context"
	"fmt"
	"strings"

	"github.com/shardis/shardis/shard/command"
)

// A blind overwrite (SET without a condition, SETEX, PSETEX) replaces
// whatever its key holds, so its result does not depend on the old copy:
// during a migration it needs no MIGRATE. The client writes the key at its
// new owner, then deletes the old copy, and answers the caller only after
// both (docs/resharding.md, "Overwrites need no move"). Why that is
// correct:
//
//   - Until the old copy is deleted, a read finds it at the old owner and
//     returns the value before the write: the write has not returned, so
//     the read may be ordered before it. Once it is deleted, every read
//     goes to the new owner and sees the write or a later one; nothing
//     puts a key back at its old owner, so no read after that sees the old
//     value again.
//   - A command that moves the key meanwhile (another process's INCR, the
//     mover) meets the new copy: MIGRATE answers BUSYKEY and the old copy
//     is deleted, the new one kept (the newer); or its MIGRATE came first
//     and the overwrite replaces the moved value. Either order is a valid
//     order of the two commands.
//   - The old copy is deleted only after the new owner acknowledged the
//     write. If the write fails, the old copy stays; if the delete fails,
//     the caller gets a *MigrateError: the write may have happened (both
//     copies exist until the next move of the key deletes the old one, as
//     after a MIGRATE that timed out), like any write whose reply was lost.
//   - Both steps run inside one execution, counted by the fence, so a
//     switch of topology (a rollback) never falls between them.

// overwrite is a blind overwrite of a moving key, sent without moving it.
type overwrite struct {
	key    string
	src    Node // the old owner
	srcIdx int
	dst    Node
}

// blindOverwrite reports whether calls is a single blind overwrite of a
// key that has to move, to be sent without moving it. It declines
// whenever the move is still the simpler path: a batch of several calls
// (another call of the batch may read or change the key, in order), a
// phase other than armed, a rollback not fenced yet, an old topology
// that is a cluster (a delete there can be redirected), or an old owner
// known to be down (the move fails at once, and the write is not sent).
func (c *Client) blindOverwrite(m *migState, calls []*call) (overwrite, bool) {
	if len(calls) != 1 || m.prev != nil || MigrationPhase(m.phase.Load()) != PhaseArmed {
		return overwrite{}, false
	}
	cl := calls[0]
	if cl.err != nil || cl.node < 0 || !isBlindOverwrite(cl.name, cl.args) {
		return overwrite{}, false
	}
	if _, ok := m.from.(*ClusterRouter); ok {
		return overwrite{}, false
	}
	k, ok := command.Arg(cl.args[0])
	if !ok || m.moved.has(k) {
		return overwrite{}, false
	}
	src, err := m.from.Route(k)
	if err != nil {
		return overwrite{}, false
	}
	dst := c.nodes.get(cl.node).node
	if src.Addr == dst.Addr {
		return overwrite{}, false
	}
	idx := c.srcIndex(m, src)
	if c.nodes.get(idx).down.Load() {
		return overwrite{}, false
	}
	return overwrite{key: k, src: src, srcIdx: idx, dst: dst}, true
}

// isBlindOverwrite reports whether a command replaces its key's value and
// expiry whatever the key held: SET key value with at most one of EX, PX,
// EXAT and PXAT (not NX, XX, GET or KEEPTTL, whose effect depends on the
// old copy), SETEX and PSETEX.
func isBlindOverwrite(name string, args []any) bool {
	switch {
	case strings.EqualFold(name, "SETEX"), strings.EqualFold(name, "PSETEX"):
		return len(args) == 3
	case !strings.EqualFold(name, "SET"):
		return false
	}
	switch len(args) {
	case 2:
		return true
	case 4:
		opt, ok := command.Arg(args[2])
		if !ok {
			return false
		}
		for _, o := range [...]string{"EX", "PX", "EXAT", "PXAT"} {
			if strings.EqualFold(opt, o) {
				return true
			}
		}
	}
	return false
}

// dropOld deletes the old copy of an overwritten key once the write has
// succeeded at the new owner (cl holds its result), and remembers the key
// as moved. A delete that fails turns the call's result into a
// *MigrateError.
func (c *Client) dropOld(ctx context.Context, m *migState, ow overwrite, cl *call) {
	if cl.err != nil {
		return // not written, or not known to be: the old copy stays
	}
	del := &call{name: "DEL", args: []any{ow.key}, node: ow.srcIdx}
	run := c.runPooled
	if c.autoPipe {
		run = c.autoDo // shared with other callers of the old owner, when there are
	}
	if run(ctx, []*call{del}) || del.err != nil {
		cl.reply = nil
		cl.err = &MigrateError{Key: ow.key, From: ow.src, To: ow.dst,
			Err: fmt.Errorf("written at the new owner, but the old copy could not be deleted: %w", del.err)}
		return
	}
	m.moved.add(ow.key)
}
