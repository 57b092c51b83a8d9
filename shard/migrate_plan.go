package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
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
// The wait is bounded. An execution that could run without end — a
// blocking command at its old owner, or a wait for a pooled connection
// (Pool.Wait) under a context that never ends — is cut off after the
// client's read timeout: its context ends, its connection closes (the
// server forgets a blocked command of a closed connection), and it fails
// with an error matching ErrFenceSwitched (one that had already been sent
// may have run; it ran before the mover armed). Every other execution is
// bounded by its own timeouts; the switch waits for them one more dial,
// write and read timeout, then stops waiting, and from the cut on an
// execution planned by the old topology that has not begun (a caller held
// in a hook) fails without sending anything. A transaction holds the count
// only during each of its round trips; one planned by the old topology that
// is still open after the switch fails before its next command with an
// error matching ErrFenceSwitched and ErrTxAborted (Client.Tx runs it again
// by the new topology by itself).

// ErrFenceSwitched is matched by the error of a command or transaction
// planned by the old topology of a migration that the fence's switch cut
// off or refused (see docs/resharding.md, "The fence"). It matches
// ErrMigration. Nothing of a refused transaction ran; a cut command may
// have run. Running it again plans it by the new topology. The error of
// a cut command does not match context.Canceled (the caller's context
// did not end); for one cut off at a node, errors.As finds that node's
// *NodeError.
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
	// active says it was planned by the new topology of m, a migration
	// that can be turned around (AbortMigration), and is counted in
	// m.active until endPlan: the rollback's switch waits for it.
	active bool
	// out is, for a plan made outside a migration (m nil) by a ring or
	// router client, the cut of the next StartMigration's switch: an
	// execution planned before StartMigration is planned by the old
	// topology too, and once that switch has come it fails without being
	// sent (executePlanned).
	out *fenceCut
}

// planFence returns the plan of a command about to be planned and the
// locator to plan it by. Outside a migration it costs one atomic load.
func (c *Client) planFence() (fencePlan, locator) {
	for {
		m := c.mig.Load()
		if m == nil {
			return fencePlan{out: c.outCut.Load()}, pinned(c.loc)
		}
		if fp, loc, ok := c.planMigrating(m); ok {
			return fp, loc
		}
	}
}

// planMigrating is planFence during migration m. It reports false when
// the client left m meanwhile (a rollback turned it around, or it
// finished): the caller plans again by the migration now on.
func (c *Client) planMigrating(m *migState) (fencePlan, locator, bool) {
	if m.enterWaiting() {
		return fencePlan{m: m, counted: true}, m.fromLoc, true
	}
	// Past PhaseWaiting for good: c.loc already routes by the new
	// topology (advance stores it before the phase).
	if m.next == nil {
		return fencePlan{m: m}, c.loc, true // a cluster client: it cannot turn around
	}
	// A ring or router client can turn around (AbortMigration): the
	// rollback's switch waits for the executions planned by this
	// topology (drainOld), counted before the migration is read again,
	// as enterWaiting does.
	m.active.Add(1)
	if c.mig.Load() != m {
		m.active.Add(-1)
		return fencePlan{}, nil, false
	}
	return fencePlan{m: m, active: true}, c.loc, true
}

// bind gives a counted execution that could otherwise outlast the
// switch's wait without end — a blocking command, or a wait for a pooled
// connection (Pool.Wait) under a context that never ends — a context that
// the switch can cut off (fenceCut.cutOff); release ends it. A blocking
// command planned outside a migration (a ring or router client's, which
// StartMigration may switch away from) or by the new topology of one that
// a rollback may turn around (fp.active) is bound the same way, to the
// cut of the switch that would leave it blocked at a node its key leaves
// (drainOld). Every other execution is bounded by its own timeouts (dial,
// write, and read per reply) and keeps ctx as is, at no cost.
func (c *Client) bind(ctx context.Context, fp fencePlan, calls []*call) (_ context.Context, release func()) {
	var f *fenceCut
	switch {
	case fp.counted:
		if !mayOutlast(c, ctx, calls) {
			return ctx, nil
		}
		f = &fp.m.cut
	case fp.active:
		f = &fp.m.activeCut
	case fp.m == nil:
		f = fp.out // nil for a cluster client
	}
	if f == nil || (!fp.counted && !hasBlocking(calls)) {
		return ctx, nil
	}
	cut := f.context()
	bctx, cancel := context.WithCancelCause(ctx)
	b := &cutBind{calls: calls, nodes: make([]int, len(calls)), cancel: cancel}
	for i, cl := range calls {
		b.nodes[i] = cl.node // as planned: a redirect may change cl.node meanwhile
	}
	f.mu.Lock()
	if f.over.Load() {
		f.mu.Unlock()
		if fp.counted {
			cancel(nil)
			return ctx, nil // cut off already; runFenced fails the calls
		}
		// Planned before a switch that has come: nothing is sent.
		cancel(ErrFenceSwitched)
		return bctx, func() {}
	}
	if f.binds == nil {
		f.binds = map[*cutBind]struct{}{}
	}
	f.binds[b] = struct{}{}
	f.mu.Unlock()
	f.bound.Add(1)
	stop := context.AfterFunc(cut, func() { cancel(ErrFenceSwitched) })
	return bctx, func() {
		stop()
		cancel(nil)
		f.mu.Lock()
		delete(f.binds, b)
		f.mu.Unlock()
		f.bound.Add(-1)
	}
}

// cutBind is an execution bound to a fenceCut (bind).
type cutBind struct {
	calls  []*call // their names, args and info do not change
	nodes  []int   // each call's node as planned
	cancel context.CancelCauseFunc
}

// hasBlocking reports whether calls include a blocking command.
func hasBlocking(calls []*call) bool {
	for _, cl := range calls {
		if _, ok := blockFor(cl); ok {
			return true
		}
	}
	return false
}

// mayOutlast reports whether calls can run without end: a blocking
// command, or a wait for a pooled connection under a context without end.
func mayOutlast(c *Client, ctx context.Context, calls []*call) bool {
	if c.cfg.Pool.Wait && ctx.Done() == nil {
		return true
	}
	for _, cl := range calls {
		if _, ok := blockFor(cl); ok {
			return true
		}
	}
	return false
}

// endPlan stops counting a plan's execution. An abandoned one (its context
// ended while a pipeline still holds a call, which the pipeline's writer
// may yet send) is counted for one more write timeout.
func (c *Client) endPlan(fp fencePlan, abandoned bool) {
	switch {
	case fp.counted:
		c.endCounted(fp, abandoned)
	case fp.active && abandoned:
		time.AfterFunc(c.writeTimeout(), func() { fp.m.active.Add(-1) })
	case fp.active:
		fp.m.active.Add(-1)
	}
}

func (c *Client) endCounted(fp fencePlan, abandoned bool) {
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
	return pool.DefaultWriteTimeout
}

// executePlanned runs calls planned under fp: execute's moves (of the
// migration the calls were planned in) and then the calls themselves.
func (c *Client) executePlanned(ctx context.Context, calls []*call, fp fencePlan) (abandoned bool) {
	if !fp.counted {
		if (fp.out != nil && fp.out.over.Load()) || (fp.active && fp.m.activeCut.over.Load()) {
			// Planned before StartMigration, by the old topology (or
			// before AbortMigration, by the topology a rollback leaves),
			// and not begun before that switch cut it off (a caller
			// held in a hook): the key may have moved since.
			failCut(calls)
			return false
		}
		// The switch may also come while a call waits for a connection
		// (MaxActive reached) or dials: it is checked again right before
		// writing (cutBeforeWrite).
		if cut := fp.cutFlag(); cut != nil {
			for _, cl := range calls {
				cl.cut = cut
			}
		}
		bctx, release := c.bind(ctx, fp, calls)            // a blocking command, which a switch may cut off
		abandoned = c.executeIn(bctx, fp.m, c.cl(), calls) // past the phase check: a cluster moved to is published
		if release != nil {
			if ctx.Err() == nil && errors.Is(context.Cause(bctx), ErrFenceSwitched) {
				markCut(calls)
			}
			release()
		}
		return abandoned
	}
	if fp.m.cut.done() {
		failCut(calls)
		return false
	}
	// The cut may also come while a call waits for a connection (Pool.Wait
	// under a context with a deadline, which bind leaves alone): it is
	// checked again right before writing (cutBeforeWrite), or the call
	// would reach the old owner after the switch stopped waiting for it.
	for _, cl := range calls {
		cl.cut = &fp.m.cut.over
	}
	bctx, release := c.bind(ctx, fp, calls)
	// Routed by the old topology: nothing moves, except that a rollback
	// not fenced yet moves forward (prev).
	abandoned = c.executeIn(bctx, fp.m.prev, fp.m.clusterRules(), calls)
	if release != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(bctx), ErrFenceSwitched) {
			markCut(calls)
		}
		release()
	}
	return abandoned
}

// cutFlag is the flag of the switch that cuts off an execution of fp that
// no switch waits for: planned before StartMigration (out), or by the new
// topology before AbortMigration (active); nil otherwise.
func (fp fencePlan) cutFlag() *atomic.Bool {
	switch {
	case fp.out != nil:
		return &fp.out.over
	case fp.active:
		return &fp.m.activeCut.over
	}
	return nil
}

// errCutBeforeWrite fails a call that a switch cut off (see call.cut)
// once its connection was at hand, before anything was written.
var errCutBeforeWrite = fmt.Errorf("%w: planned by the old topology and not sent before the switch; run it again", ErrFenceSwitched)

// failCut fails calls that were planned by the old topology and not sent
// before the switch cut the old plans off.
func failCut(calls []*call) {
	for _, cl := range calls {
		if cl.err == nil && cl.node >= 0 {
			cl.err = fmt.Errorf("%w: planned by the old topology and not sent before the switch; run it again", ErrFenceSwitched)
		}
	}
}

// errCutConn is the cause in the *NodeError of a call that the switch
// cut off: the switch closed its connection to the old owner.
var errCutConn = errors.New("shardis: its connection closed by the switch")

// markCut gives the calls that the cut ended the error that says so. Their
// error was the context.Canceled of the context that the switch ended
// (bind), which is not the caller's: the new one does not match
// context.Canceled, as a caller's loop that reads Canceled as "the caller
// gave up" would drop the command instead of running it again by the new
// topology, and does not say "context canceled". It matches
// ErrFenceSwitched, and for a call cut off at a node errors.As finds a
// *NodeError of that node.
func markCut(calls []*call) {
	for _, cl := range calls {
		if cl.err == nil || !errors.Is(cl.err, context.Canceled) {
			continue
		}
		var ne *NodeError
		if errors.As(cl.err, &ne) {
			cl.err = errtext.Errorf("%w: cut off by the switch while running at the old owner (it may have run): %w",
				ErrFenceSwitched, &NodeError{Node: ne.Node, Err: errCutConn})
			continue
		}
		cl.err = errtext.Errorf("%w: cut off by the switch while running at the old owner (it may have run)", ErrFenceSwitched)
	}
}

// fenceCut is the switch's way to end the executions planned by the old
// topology that outlast its wait. The zero value is ready.
type fenceCut struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	bound  atomic.Int64 // contexts bound to it and not released yet (bind)
	over   atomic.Bool  // cutOff or cutMoving was called: the cheap test of executePlanned

	mu    sync.Mutex            // guards binds, and over's setting against bind
	binds map[*cutBind]struct{} // the executions bound and not released yet (bind)
}

func (f *fenceCut) context() context.Context {
	f.once.Do(func() { f.ctx, f.cancel = context.WithCancel(context.Background()) })
	return f.ctx
}

// cutOff ends every context bound to the old plans.
func (f *fenceCut) cutOff() {
	f.context()
	f.mu.Lock()
	f.over.Store(true)
	f.mu.Unlock()
	f.cancel()
}

// cutMoving is cutOff for a client that leaves the old plans' topology
// without a switch's wait (FinishMigration): the executions not begun
// fail as after cutOff, but of those bound (the blocking commands), only
// the ones with a call that moved reports true end: a blocking command
// whose keys stay where it waits is served there as before.
func (f *fenceCut) cutMoving(moved func(cl *call, node int) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.over.Store(true)
	for b := range f.binds {
		for i, cl := range b.calls {
			if moved(cl, b.nodes[i]) {
				b.cancel(ErrFenceSwitched)
				break
			}
		}
	}
}

func (f *fenceCut) done() bool { return f.over.Load() }

// drainOld waits, once the phase has left PhaseWaiting, until no
// execution planned by the old topology runs. After the client's read
// timeout it cuts off the ones that could run without end (bind): their
// connections close at once. The others are bounded by their own
// timeouts: drainOld waits for them up to one more dial, write and read
// timeout, and then stops waiting; from the cut on, an execution planned
// by the old topology that has not begun yet (a caller held in a hook)
// fails without sending anything (executePlanned). An abandoned call is
// counted for one write timeout more (endPlan). Close ends the wait, and
// so does ctx: drainOld then returns an error matching ErrMigration and
// ctx's, having cut nothing off, and the switch is not complete (advance).
//
// For a rollback (m.prev set) it also waits for the blind overwrites of
// the migration it turns around that are still in flight, some begun
// before the client turned around and so not counted in m.waiting: each
// writes the key at its new owner and then deletes the old copy, and the
// reverse moves must not fall between the two (migrate_overwrite.go).
func (c *Client) drainOld(ctx context.Context, m *migState) error {
	// Blocking commands planned before the migration began (at run time,
	// StartMigration) are planned by the old topology too: they are
	// waited for and cut off with the others.
	out := c.outCut.Load()
	if m.prev != nil {
		out = nil // planned before the migration that this one turns around
	}
	busy := func() bool {
		return m.waiting.Load() > 0 || (out != nil && out.bound.Load() > 0) ||
			(m.prev != nil && (m.prev.overwrites.Load() > 0 || m.prev.active.Load() > 0))
	}
	if !busy() {
		return nil
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	cutAt := time.Now().Add(c.readTimeout)
	dial := c.pools.Options().DialTimeout
	if dial <= 0 {
		dial = pool.DefaultDialTimeout
	}
	giveUp := cutAt.Add(dial + c.writeTimeout() + c.readTimeout)
	for busy() {
		if now := time.Now(); !m.cut.done() && now.After(cutAt) {
			m.cut.cutOff()
			if out != nil {
				out.cutOff()
			}
			if m.prev != nil {
				m.prev.activeCut.cutOff()
			}
		} else if now.After(giveUp) {
			return nil
		}
		select {
		case <-tick.C:
		case <-c.stop:
			return nil
		case <-ctx.Done():
			if !busy() {
				return nil
			}
			return fmt.Errorf("%w: the switch to the new topology was waiting for the commands planned by the old one: %w", ErrMigration, ctx.Err())
		}
	}
	return nil
}

// txPlan is the fence plan of a transaction (Client.Tx, or a Conn's
// WATCH/MULTI): planned by the old topology, it is counted only during
// each of its round trips, each of which must begin before the switch.
// Planned by the new topology of a migration that can be turned around
// (active), each round trip is counted in its m.active and must begin
// before a rollback's switch.
type txPlan struct {
	m      *migState // planned by the old topology, or by the new one when active
	active bool
	c      *Client // active: the client, whose rollback may switch
	loc    locator
	// out: planned outside a migration by a ring or router client (m
	// nil), by the topology that the next StartMigration's switch leaves:
	// each round trip must begin before that switch (fencePlan.out).
	out *fenceCut
}

// planTx returns the plan and the locator of a transaction about to pick
// its node.
func (c *Client) planTx() txPlan {
	fp, loc := c.planFence()
	switch {
	case fp.counted:
		fp.m.waiting.Add(-1) // held per round trip (enter)
		return txPlan{m: fp.m, loc: loc}
	case fp.active:
		fp.m.active.Add(-1) // held per round trip (enter)
		return txPlan{m: fp.m, active: true, c: c, loc: loc}
	}
	if t := c.topo.Load(); fp.m == nil && t != nil {
		// The topology now, not the live locator: the transaction's
		// node and the checks of its keys must agree after a
		// StartMigration switched the client's routing.
		return txPlan{loc: pinned(t.loc), out: fp.out}
	}
	return txPlan{loc: loc}
}

// enter counts one round trip of the transaction; it fails with an error
// matching ErrFenceSwitched and ErrTxAborted, before anything is sent,
// when the switch came first (for an active plan: the switch of a
// rollback that turned its migration around; for one planned outside a
// migration: the switch of a StartMigration since). Call leave after the
// round trip.
func (p txPlan) enter() error {
	switch {
	case p.m == nil:
		if p.out != nil && p.out.over.Load() {
			return errTxFenced
		}
		return nil
	case p.active:
		p.m.active.Add(1)
		if r := p.c.mig.Load(); r != nil && r != p.m && r.prev == p.m && r.phase.Load() != int32(PhaseWaiting) {
			p.m.active.Add(-1)
			return errTxFenced
		}
		return nil
	}
	if !p.m.enterWaiting() {
		return errTxFenced
	}
	return nil
}

func (p txPlan) leave() {
	switch {
	case p.m == nil:
	case p.active:
		p.m.active.Add(-1)
	default:
		p.m.waiting.Add(-1)
	}
}
