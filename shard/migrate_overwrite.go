package shard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

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
//   - An expiry the overwrite sets may pass before the delete; if another
//     process moved the old copy meanwhile, its MIGRATE met no copy at the
//     new owner and brought the old value back. The delete then finds
//     nothing and the expiry has passed since the write was sent: the call
//     fails (a write that did not happen is consistent with what remains).
//     EXAT and PXAT are not sent this way: their moment is on the server's
//     clock.
//   - A rollback's fence waits for the overwrites in flight of the
//     migration it turns around (migState.overwrites, drainOld), so the
//     reverse moves never fall between an overwrite's two steps.

// overwrite is a blind overwrite of a moving key, sent without moving it.
type overwrite struct {
	key    string
	src    Node // the old owner
	srcIdx int
	dst    Node
	ttl    time.Duration // the expiry the overwrite sets; 0: none
	start  time.Time     // before the write was sent (with a ttl)
}

// asOverwrite reports whether cl, the only call of its batch, is a blind
// overwrite of key pm.key, which has to move from pm.src to dst, and fills
// ow to send it without moving the key. moveFirst asks, with the route it
// already found, once the key is known to move and not known to be moved.
// It declines whenever the move is still the simpler path: a phase other
// than armed, the moves of a rollback (the caller passes no ow), an old
// topology that is a cluster (a delete there can be redirected), or an old
// owner known to be down (the move fails at once, and the write is not
// sent). When it accepts, the overwrite is counted in m.overwrites until
// endOverwrite.
func (c *Client) asOverwrite(m *migState, phase MigrationPhase, cl *call, pm pendingMove, dst Node, ow *overwrite) bool {
	if phase != PhaseArmed {
		return false
	}
	ttl, ok := blindOverwriteTTL(cl.name, cl.args)
	if !ok {
		return false
	}
	if _, ok := m.from.(*ClusterRouter); ok {
		return false
	}
	idx := c.srcIndex(m, pm.src)
	if c.nodes.get(idx).down.Load() {
		return false
	}
	*ow = overwrite{key: pm.key, src: pm.src, srcIdx: idx, dst: dst, ttl: ttl}
	if ttl > 0 {
		ow.start = time.Now()
	}
	m.overwrites.Add(1) // until endOverwrite
	return true
}

// endOverwrite stops counting an overwrite of m. An abandoned one (its
// write may still be sent by the pipeline that holds it) is counted for
// one more write timeout, as endPlan does.
func (c *Client) endOverwrite(m *migState, abandoned bool) {
	if abandoned {
		time.AfterFunc(c.writeTimeout(), func() { m.overwrites.Add(-1) })
		return
	}
	m.overwrites.Add(-1)
}

// blindOverwriteTTL reports whether a command replaces its key's value and
// expiry whatever the key held, and the expiry it sets (0: none): SET key
// value with no option or with EX or PX (not NX, XX, GET or KEEPTTL, whose
// effect depends on the old copy, nor EXAT or PXAT, whose moment is read
// on the server's clock), SETEX and PSETEX. An expiry that is not a
// positive integer is left to the server's own error, on the move path.
func blindOverwriteTTL(name string, args []any) (time.Duration, bool) {
	var unit time.Duration
	var n any
	switch {
	case strings.EqualFold(name, "SETEX") && len(args) == 3:
		unit, n = time.Second, args[1]
	case strings.EqualFold(name, "PSETEX") && len(args) == 3:
		unit, n = time.Millisecond, args[1]
	case !strings.EqualFold(name, "SET"):
		return 0, false
	case len(args) == 2:
		return 0, true
	case len(args) == 4:
		opt, ok := command.Arg(args[2])
		switch {
		case !ok:
			return 0, false
		case strings.EqualFold(opt, "EX"):
			unit, n = time.Second, args[3]
		case strings.EqualFold(opt, "PX"):
			unit, n = time.Millisecond, args[3]
		default:
			return 0, false
		}
	default:
		return 0, false
	}
	var v int64
	switch x := n.(type) {
	case int:
		v = int64(x)
	case int64:
		v = x
	default:
		s, ok := command.Arg(n)
		if !ok {
			return 0, false
		}
		var err error
		if v, err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, false
		}
	}
	if v <= 0 || v > int64(math.MaxInt64/unit) {
		return 0, false
	}
	return time.Duration(v) * unit, true
}

// errExpiredInFlight is the cause of a blind overwrite's *MigrateError
// when its expiry passed while it was in flight and the old copy had left
// meanwhile.
var errExpiredInFlight = errors.New("the overwrite's expiry passed before its old copy was deleted, and the old copy had moved: whether the write took effect is unknown")

// testHookOverwritten, when set (by tests), runs between a blind
// overwrite's two steps: the write at the new owner and dropOld.
var testHookOverwritten atomic.Pointer[func(*Client)]

// dropOld deletes the old copy of an overwritten key once the write has
// succeeded at the new owner (cl holds its result), and remembers the key
// as moved. A delete that fails turns the call's result into a
// *MigrateError.
func (c *Client) dropOld(ctx context.Context, m *migState, ow overwrite, cl *call) {
	if cl.err != nil {
		return // not written, or not known to be: the old copy stays
	}
	// A rollback that turns m around may have switched while the write
	// ran: from its cut on, the old owner is where keys move back to, and
	// the DEL is not sent (cutMoves), or it could delete a key moved back.
	del := &call{name: "DEL", args: []any{ow.key}, node: ow.srcIdx, cut: &m.activeCut.over}
	run := c.runPooled
	if c.autoPipe {
		run = c.autoDo // shared with other callers of the old owner, when there are
	}
	if c.runSide(ctx, []*call{del}, run) || del.err != nil {
		cl.reply = nil
		cl.err = &MigrateError{Key: ow.key, From: ow.src, To: ow.dst, Sent: true,
			Err: fmt.Errorf("written at the new owner, but the old copy could not be deleted: %w", del.err)}
		m.failures.Add(1)
		return
	}
	if n, _ := del.reply.(int64); n == 0 && ow.ttl > 0 && time.Since(ow.start) >= ow.ttl {
		// The old copy had left, and the overwrite may have expired at the
		// new owner before it did: a move after the expiry brings the old
		// value back. Reported as a write whose outcome is unknown, which
		// it is consistent with.
		cl.reply = nil
		cl.err = &MigrateError{Key: ow.key, From: ow.src, To: ow.dst, Sent: true, Err: errExpiredInFlight}
		m.failures.Add(1)
		return
	}
	m.moved.add(ow.key)
	m.overwrote.Add(1)
}
