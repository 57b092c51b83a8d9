package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Planning and the fence's switch (docs/resharding.md, "The fence").
//
// A command is planned (its keys located, its calls given nodes) and then
// executed. While a migration waits behind its fence, commands are planned
// by the old topology; when the fence goes up, the client switches to the
// new one, and the beacons may say "fenced" — after which the mover arms
// and keys move — only once no command planned by the old topology can
// still reach a server. So "plan by the current topology" and "count as in
// flight" are one step (planFence): the count is taken first, the phase is
// read after it, and the locator the command is planned by follows from
// that one reading. The switch stores the new phase and then waits for the
// count to drain (drainOld). A command is therefore either counted and
// planned by the old topology — the switch waits for it — or planned by the
// new one; it never needs planning again, and no part of it fails for
// being planned a moment too early.
//
// The wait is bounded: the executions still counted after the client's
// read timeout (a blocking command at its old owner, a caller waiting for a
// pooled connection with a context that never ends) are cut off — their
// contexts end, their connections close, and they fail with an error
// matching ErrFenceSwitched (a cut command that had already been sent may
// have run: it ran before the mover armed). A transaction holds the count
// only during each of its round trips; one planned by the old topology that
// is still open after the switch fails before its next command with an
// error matching ErrFenceSwitched and ErrTxAborted (Client.Tx runs it again
// by the new topology by itself).

// ErrFenceSwitched is matched by the error of a command or transaction
// planned by the old topology of a migration that the fence's switch cut
// off or refused (see docs/resharding.md, "The fence"). It matches
// ErrMigration. Nothing of a refused transaction ran; a cut command may
// have run. Running it again plans it by the new topology.
var ErrFenceSwitched = fmt.Errorf("%w: the fence switched to the new topology", ErrMigration)

// errTxFenced fails a transaction planned by the old topology whose next
// round trip would come after the switch: it matches ErrTxAborted, so that
// the usual "run it again" loops run it again, by the new topology.
var errTxFenced = fmt.Errorf("%w (the transaction was planned by the old topology; %w)", ErrTxAborted, ErrFenceSwitched)

// fencePlan is how a command was planned with respect to its client's
// migration: m is the migration at planning time (nil: none), and counted
// says it was planned by the old topology and is counted in m.waiting
// until endPlan.
type fencePlan struct {
	m       *migState
	counted bool
}

// planFence returns the plan of a command about to be planned and the
// locator to plan it by. Outside a migration it costs one atomic load.
func (c *Client) planFence() (fencePlan, locator) {
	m := c.mig.Load()
	if m == nil {
		return fencePlan{}, c.loc
	}
	if m.enterWaiting() {
		return fencePlan{m: m, counted: true}, m.fromLoc
	}
	// Past PhaseWaiting for good: c.loc already routes by the new
	// topology (advance stores it before the phase).
	return fencePlan{m: m}, c.loc
}

// bind gives a counted execution a context that the switch can cut off
// (fenceCut.cutOff); done releases it. Uncounted plans keep ctx as is.
func (fp fencePlan) bind(ctx context.Context) (context.Context, func()) {
	if !fp.counted {
		return ctx, nil
	}
	cut := fp.m.cut.context()
	if cut.Err() != nil {
		return ctx, nil // cut off already; runFenced fails the calls
	}
	bctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(cut, func() { cancel(ErrFenceSwitched) })
	return bctx, func() {
		stop()
		cancel(nil)
	}
}

// endPlan stops counting a plan's execution. An abandoned one (its context
// ended while a pipeline still holds a call, which the pipeline's writer
// may yet send) is counted for one more write timeout.
func (c *Client) endPlan(fp fencePlan, abandoned bool) {
	if !fp.counted {
		return
	}
	if abandoned {
		time.AfterFunc(c.writeTimeout(), func() { fp.m.waiting.Add(-1) })
		return
	}
	fp.m.waiting.Add(-1)
}

// writeTimeout is the pools' write timeout.
func (c *Client) writeTimeout() time.Duration {
	if t := c.cfg.Pool.WriteTimeout; t > 0 {
		return t
	}
	return 3 * time.Second
}

// executePlanned runs calls planned under fp: execute's moves (of the
// migration the calls were planned in) and then the calls themselves.
func (c *Client) executePlanned(ctx context.Context, calls []*call, fp fencePlan) (abandoned bool) {
	if !fp.counted {
		return c.executeIn(ctx, fp.m, calls)
	}
	if fp.m.cut.done() {
		failCut(calls)
		return false
	}
	bctx, release := fp.bind(ctx)
	// Routed by the old topology: nothing moves, except that a rollback
	// not fenced yet moves forward (prev).
	abandoned = c.executeIn(bctx, fp.m.prev, calls)
	if release != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(bctx), ErrFenceSwitched) {
			markCut(calls)
		}
		release()
	}
	return abandoned
}

// failCut fails calls that were planned by the old topology and not sent
// before the switch cut the old plans off.
func failCut(calls []*call) {
	for _, cl := range calls {
		if cl.err == nil && cl.node >= 0 {
			cl.err = fmt.Errorf("%w: planned by the old topology and not sent before the switch; run it again", ErrFenceSwitched)
		}
	}
}

// markCut gives the calls that the cut ended the error that says so.
func markCut(calls []*call) {
	for _, cl := range calls {
		if cl.err != nil && errors.Is(cl.err, context.Canceled) {
			cl.err = fmt.Errorf("%w: cut off by the switch while running at the old owner (it may have run): %v", ErrFenceSwitched, cl.err)
		}
	}
}

// fenceCut is the switch's way to end the executions planned by the old
// topology that outlast its wait. The zero value is ready.
type fenceCut struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
}

func (f *fenceCut) context() context.Context {
	f.once.Do(func() { f.ctx, f.cancel = context.WithCancel(context.Background()) })
	return f.ctx
}

// cutOff ends every context bound to the old plans.
func (f *fenceCut) cutOff() {
	f.context()
	f.cancel()
}

func (f *fenceCut) done() bool { return f.context().Err() != nil }

// drainOld waits, once the phase has left PhaseWaiting, until no
// execution planned by the old topology runs. After the client's read
// timeout it cuts the remaining ones off (fenceCut) and waits for them
// to return, which their canceller makes prompt; an abandoned call is
// waited for one write timeout more (endPlan). Close ends the wait.
func (c *Client) drainOld(m *migState) {
	if m.waiting.Load() == 0 {
		return
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	cutAt := time.Now().Add(c.readTimeout)
	for m.waiting.Load() > 0 {
		if !m.cut.done() && time.Now().After(cutAt) {
			m.cut.cutOff()
		}
		select {
		case <-tick.C:
		case <-c.stop:
			return
		}
	}
}

// txPlan is the fence plan of a transaction (Client.Tx, or a Conn's
// WATCH/MULTI): planned by the old topology, it is counted only during
// each of its round trips, each of which must begin before the switch.
type txPlan struct {
	m   *migState // set only when planned by the old topology
	loc locator
}

// planTx returns the plan and the locator of a transaction about to pick
// its node.
func (c *Client) planTx() txPlan {
	fp, loc := c.planFence()
	if !fp.counted {
		return txPlan{loc: loc}
	}
	fp.m.waiting.Add(-1) // held per round trip (enter)
	return txPlan{m: fp.m, loc: loc}
}

// enter counts one round trip of the transaction; it fails with an error
// matching ErrFenceSwitched and ErrTxAborted, before anything is sent,
// when the switch came first. Call leave after the round trip.
func (p txPlan) enter() error {
	if p.m == nil {
		return nil
	}
	if !p.m.enterWaiting() {
		return errTxFenced
	}
	return nil
}

func (p txPlan) leave() {
	if p.m != nil {
		p.m.waiting.Add(-1)
	}
}
