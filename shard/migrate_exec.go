package shard

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard/command"
)

// Why moving before running is correct (docs/resharding.md has the long
// form):
//
//   - MIGRATE runs on the old owner's single thread: it writes the key to
//     the new owner (RESTORE), waits for OK and deletes its own copy, with
//     no other command of the old owner in between. Two processes moving
//     the same key are serialised there: one moves it, the other gets
//     NOKEY. So once MIGRATE answered OK or NOKEY, the key is not at the old
//     owner, and every later command of every migrating process runs at
//     the new owner: a read-modify-write (INCR, HINCRBY, LPUSH, ...) sees
//     the moved value, never a fresh one.
//   - MIGRATE without REPLACE never overwrites the new owner's copy: it
//     fails with BUSYKEY instead. Under the protocol the only writes to a
//     moving key happen at its new owner, after a move or as a blind
//     overwrite (migrate_overwrite.go), so the new owner's copy is the
//     newer one (or the same one, when an earlier MIGRATE timed
//     out after RESTORE but before DEL): the old owner's copy is deleted.
//   - MIGRATE carries the remaining TTL; a key that expires meanwhile is
//     simply not there (NOKEY).
//   - Once a key has been seen moved (OK, NOKEY), nothing puts it back at
//     the old owner (every writer runs at the new one), so the client
//     remembers it and skips the MIGRATE next time (movedSet).

// moveFirst makes sure that every key of calls whose owner differs
// between the old topology and the call's node sits at that node, before
// the calls run. A call whose key could not be moved fails with a
// *MigrateError and is not sent.
//
// With readOld, a read-only call whose keys all still sit at one old owner
// is answered there instead, without moving anything (migrate_read.go).
// With ow, a single call that overwrites its key blindly is sent without
// moving the key, and ow describes it (ow.srcIdx >= 0; migrate_overwrite.go);
// otherwise ow.srcIdx is set to -1.
//
// moveFirst returns the calls that remain to be sent: calls itself when
// none was answered that way.
func (c *Client) moveFirst(ctx context.Context, m *migState, calls []*call, readOld bool, ow *overwrite) []*call {
	if ow != nil {
		ow.srcIdx = -1
		if len(calls) != 1 || m.prev != nil {
			ow = nil // a batch, or a rollback's own moves: the key moves
		}
	}
	phase := MigrationPhase(m.phase.Load())
	if phase == PhaseWaiting {
		if m.prev == nil {
			return calls // routed by the old topology: nothing moves yet
		}
		m, phase = m.prev, PhaseArmed // a rollback not fenced yet moves forward
	}
	served := c.movePass(ctx, m, &phase, calls, readOld, ow)
	// A slot of an old cluster that moved to another master since the
	// client read the cluster's map: its old master answered MOVED, and
	// nothing ran. The MOVED is followed, as a cluster client does
	// (migrate_cluster_moved.go): the calls it failed are planned again,
	// within the old cluster's redirect budget.
	for hop := 1; ; hop++ {
		redo := c.followOldMoved(m, calls, hop)
		// A slot of the cluster that keys move into may have moved too:
		// the MIGRATE's target refused the keys, with MOVED, or with ASK while the
		// slot is being moved inside it (migrate_cluster_target_moved.go).
		redo = append(redo, c.followTargetMoved(ctx, m, calls, hop)...)
		if len(redo) == 0 {
			break
		}
		if c.movePass(ctx, m, &phase, redo, readOld, nil) {
			served = true
		}
	}
	if !served {
		return calls
	}
	return unserved(calls)
}

// movePass is one pass of moveFirst over calls in migration m, at *phase
// (which it moves on to armed when it waited for the fence). It reports
// whether a call was answered at its keys' old owner.
func (c *Client) movePass(ctx context.Context, m *migState, phase *MigrationPhase, calls []*call, readOld bool, ow *overwrite) (served bool) {
	var (
		mv   *moves
		rd   *oldReads
		pbuf [8]pendingMove
	)
	bp := keyPosBufs.Get().(*[]int)
	defer keyPosBufs.Put(bp)
	for _, cl := range calls {
		if cl.err != nil || cl.node < 0 {
			continue
		}
		if cl.info == nil && !c.learnRouted(ctx, cl) {
			continue // refused: its keys are unknown
		}
		pos, err := cl.info.KeyPositions(cl.args, (*bp)[:0])
		*bp = pos[:0]
		if err != nil {
			continue // the server will answer the command with its own error
		}
		var dst Node
		pend, keys := pbuf[:0], 0
		for _, p := range pos {
			k, ok := command.Arg(cl.args[p])
			if !ok {
				continue
			}
			keys++
			if dst.Addr == "" {
				dst = c.nodes.get(cl.node).node
			}
			if cl.routeLoc != nil {
				if n, g, err := cl.routeLoc.locate(k); err == nil && g != cl.group && n >= 0 && c.nodes.get(n).node.Addr != dst.Addr {
					// Routed by the caller's key to another owner's
					// node: the command meets there what it would
					// without a migration. Moved there, the key would
					// leave its own owner's way, remembered as moved.
					continue
				}
			}
			src, err := m.from.Route(k)
			if err != nil {
				cl.err, cl.done = &MigrateError{Key: k, From: m.unplaced(), To: dst, Err: err}, true
				break
			}
			if src.Addr == dst.Addr {
				continue // planned by the new topology: its owner did not change (migrate_plan.go)
			}
			if m.moved.has(k) {
				continue
			}
			if *phase == PhaseFenced {
				if err := m.waitArmed(ctx, c.readTimeout); err != nil {
					cl.err = &MigrateError{Key: k, From: src, To: dst, Err: err}
					break
				}
				*phase = PhaseArmed
				if cl.op != nil {
					// The wait is the operation's, not its first
					// attempt's (Op.Duration, CommandEvent.Start).
					cl.op.side = true
				}
			}
			pend = append(pend, pendingMove{key: k, src: src})
		}
		if cl.err == nil {
			if dst.Addr == "" {
				dst = c.nodes.get(cl.node).node
			}
			if err := sortPatternsMove(m, cl, dst); err != nil {
				cl.err, cl.done = err, true
			}
		}
		if len(pend) == 0 || cl.err != nil {
			continue
		}
		if ow != nil && keys == 1 && c.asOverwrite(m, *phase, cl, pend[0], dst, ow) {
			continue
		}
		if readOld && len(pend) == keys && readableAtOld(m, cl, pend) {
			if rd == nil {
				rd = new(oldReads)
			}
			rd.add(c, m, cl, pend, dst)
			continue
		}
		if mv == nil {
			mv = new(moves)
		}
		for _, pm := range pend {
			mv.add(c, m, pm.src, dst, pm.key, cl)
		}
	}
	if rd != nil {
		mv = c.runOldReads(ctx, m, rd, mv) // the reads it could not answer move first
	}
	if mv != nil {
		c.runMoves(ctx, m, mv)
	}
	if rd != nil || mv != nil {
		for _, cl := range calls {
			if cl.op != nil {
				cl.op.side = true // the hooks time the calls' batch from its own send
			}
		}
	}
	return rd != nil && rd.served > 0
}

// learnRouted gives a call that the command table does not know (sent
// with DoKey or Pipeline.SendKey, routed by a key of the caller's) the
// command's key positions, learned from the servers (learn.go), so that
// its keys move first like any command's: run unmoved at the new owner, a
// read-modify-write would start from nothing there while the value sits
// at the old owner, and the next move would delete the old value as busy.
// A command whose keys cannot be learned is refused (false; nothing is
// sent) with an error matching ErrMigration and ErrUnknownCommand.
func (c *Client) learnRouted(ctx context.Context, cl *call) bool {
	info, err := c.commandInfo(ctx, cl.name, cl.args)
	if err != nil {
		cl.err = errtext.Errorf("%w: %s, routed by the caller's key, cannot have its keys moved first: %w", ErrMigration, cl.name, err)
		cl.done = true
		return false
	}
	cl.info = info
	return true
}

// pendingMove is a key of one call that has to move before the call runs
// at its new owner, and the key's old owner.
type pendingMove struct {
	key string
	src Node
}

// keyPosBufs recycles the key-position buffers of moveFirst.
var keyPosBufs = sync.Pool{New: func() any { b := make([]int, 0, 16); return &b }}

// moves is the set of keys one batch must move, grouped by (old owner,
// new owner) pair: one MIGRATE ... KEYS each.
type moves struct {
	pairs []movePair
}

type movePair struct {
	src, dst Node
	srcIdx   int
	keys     []string
	seen     map[string]struct{} // once keys is long
	waiters  []moveWaiter
}

// moveWaiter is a call that waits for one of its keys to move.
type moveWaiter struct {
	cl  *call
	key string
}

func (mv *moves) add(c *Client, m *migState, src, dst Node, key string, cl *call) {
	var p *movePair
	for i := range mv.pairs {
		if mv.pairs[i].src.Addr == src.Addr && mv.pairs[i].dst.Addr == dst.Addr {
			p = &mv.pairs[i]
			break
		}
	}
	if p == nil {
		mv.pairs = append(mv.pairs, movePair{src: src, dst: dst, srcIdx: c.srcIndex(m, src)})
		p = &mv.pairs[len(mv.pairs)-1]
	}
	p.waiters = append(p.waiters, moveWaiter{cl: cl, key: key})
	if p.has(key) {
		return
	}
	p.keys = append(p.keys, key)
	if p.seen != nil {
		p.seen[key] = struct{}{}
	}
}

// has reports whether key is already in the pair's MIGRATE.
func (p *movePair) has(key string) bool {
	if p.seen != nil {
		_, ok := p.seen[key]
		return ok
	}
	for _, k := range p.keys {
		if k == key {
			return true
		}
	}
	if len(p.keys) >= 16 {
		p.seen = make(map[string]struct{}, 2*len(p.keys))
		for _, k := range p.keys {
			p.seen[k] = struct{}{}
		}
	}
	return false
}

// runMoves brings the keys of every pair to their new owners and fails
// the calls whose keys could not be moved. The moves of concurrent callers
// are coalesced (moveLane): per pair, one MIGRATE is in flight at a time,
// and the keys that arrive meanwhile leave together in the next one.
func (c *Client) runMoves(ctx context.Context, m *migState, mv *moves) {
	rounds := make([]*moveRound, len(mv.pairs))
	var lead []*moveRound
	for i := range mv.pairs {
		r, leader := m.join(&mv.pairs[i])
		rounds[i] = r
		if leader {
			lead = append(lead, r)
		}
	}
	if len(lead) > 0 {
		c.sendRounds(ctx, m, lead)
	}
	for i := range mv.pairs {
		p, r := &mv.pairs[i], rounds[i]
		var err error
		select {
		case <-r.done:
			err = r.err
		case <-ctx.Done():
			err = fmt.Errorf("shardis: %w", ctx.Err())
		}
		if err != nil {
			for _, w := range p.waiters {
				if w.cl.err == nil {
					// Final: a retry (cluster redirects, a Sentinel
					// failover) would run the command without the move.
					w.cl.err, w.cl.done = &MigrateError{Key: w.key, From: p.src, To: p.dst, Err: err}, true
				}
			}
		}
	}
}

// moveLane is one (old node, new node) pair's queue of moves.
type moveLane struct {
	busy bool       // a MIGRATE of this pair is in flight
	next *moveRound // keys waiting for the next one
}

// moveRound is one MIGRATE ... KEYS and the callers waiting for it.
type moveRound struct {
	pair movePair // src, dst, srcIdx and the keys
	done chan struct{}
	err  error
}

// join adds p's keys to its lane's next round. The caller that finds the
// lane idle leads: it sends the round itself (leader true).
func (m *migState) join(p *movePair) (r *moveRound, leader bool) {
	key := [2]string{p.src.Addr, p.dst.Addr}
	m.lanesMu.Lock()
	defer m.lanesMu.Unlock()
	lane := m.lanes[key]
	if lane == nil {
		lane = &moveLane{}
		m.lanes[key] = lane
	}
	if lane.next == nil {
		lane.next = &moveRound{pair: movePair{src: p.src, dst: p.dst, srcIdx: p.srcIdx}, done: make(chan struct{})}
	}
	r = lane.next
	for _, k := range p.keys {
		if !r.pair.has(k) {
			r.pair.keys = append(r.pair.keys, k)
			if r.pair.seen != nil {
				r.pair.seen[k] = struct{}{}
			}
		}
	}
	if !lane.busy {
		lane.busy, lane.next = true, nil
		return r, true
	}
	return r, false
}

// sendRounds sends one MIGRATE per round, each to its old owner, in one
// executor batch (the old owners work in parallel), settles each, wakes
// its waiters, and hands each lane's next round, if any, to a goroutine.
func (c *Client) sendRounds(ctx context.Context, m *migState, rounds []*moveRound) {
	calls := make([][]*call, len(rounds))
	var all []*call
	for i, r := range rounds {
		calls[i] = c.migrateCalls(m, &r.pair) // one per slot from a cluster (migrate_cluster.go)
		all = append(all, calls[i]...)
	}
	cutMoves(m, all)
	c.sendMigrates(ctx, m, all)
	countMoves(m, all)
	for i, r := range rounds {
		err := firstCallErr(calls[i])
		if isBusyKey(err) {
			err = c.settleBusy(ctx, m, &r.pair)
		}
		err = c.tlsHint(err) // migrate_target.go
		if err == nil {
			for _, k := range r.pair.keys {
				m.moved.add(k)
			}
		} else if _, ok := m.from.(*ClusterRouter); (!ok || !isMovedReply(err)) && (c.cl() == nil || !isTargetMoved(err)) {
			m.failures.Add(1) // a MOVED of either cluster, an ASK of the new one, is followed (followOldMoved, followTargetMoved)
		}
		r.err = err
		close(r.done)
		c.nextRound(m, [2]string{r.pair.src.Addr, r.pair.dst.Addr})
	}
}

// cutMoves makes the moves of migration m that are not written yet when
// a rollback that turns m around switches (m.activeCut) fail without
// being sent: from that switch on, keys move back, and a forward MIGRATE
// sent later (one that waited for a pooled connection to the old owner
// for longer than the switch waited) would carry a key away from the
// owner the reverse-armed processes find it at and remember it at.
func cutMoves(m *migState, calls []*call) {
	for _, cl := range calls {
		cl.cut = &m.activeCut.over
	}
}

// countMoves counts the MIGRATE calls that moved keys (MigrationInfo.Moves):
// those that answered OK, not NOKEY.
func countMoves(m *migState, calls []*call) {
	for _, cl := range calls {
		if s, ok := cl.reply.(string); ok && cl.err == nil && s == "OK" {
			m.moves.Add(1)
		}
	}
}

// nextRound sends a lane's waiting round on a goroutine of its own (its
// waiters may have different contexts: it is bounded by the read
// timeout), or marks the lane idle.
func (c *Client) nextRound(m *migState, key [2]string) {
	m.lanesMu.Lock()
	lane := m.lanes[key]
	r := lane.next
	if r == nil {
		lane.busy = false
		m.lanesMu.Unlock()
		return
	}
	lane.next = nil
	m.lanesMu.Unlock()
	started := c.goTracked(&c.inflight, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*c.readTimeout)
		defer cancel()
		c.sendRounds(ctx, m, []*moveRound{r})
	})
	if !started { // closing: the waiting callers learn so
		r.err = ErrClosed
		close(r.done)
	}
}

// settleBusy handles a MIGRATE that met a key its new owner already has.
// MIGRATE ... KEYS moved every other key of the batch and left that one;
// the reply does not say which, so each key is moved on its own: NOKEY for
// those already moved, BUSYKEY again for the one left, whose old copy is
// then deleted (the new owner's copy is the newer one).
func (c *Client) settleBusy(ctx context.Context, m *migState, p *movePair) error {
	for _, k := range p.keys {
		args, err := c.migrateArgs(m, p.dst, []string{k})
		if err != nil {
			return err
		}
		cl := &call{name: "MIGRATE", args: args, node: p.srcIdx, cut: &m.activeCut.over}
		c.sendMigrates(ctx, m, []*call{cl})
		countMoves(m, []*call{cl})
		if isBusyKey(cl.err) {
			cl = &call{name: "DEL", args: []any{k}, node: p.srcIdx, cut: &m.activeCut.over}
			c.runSide(ctx, []*call{cl}, c.runPooled)
			if n, _ := cl.reply.(int64); cl.err == nil && n > 0 {
				m.busy.Add(1) // the old copy was deleted (not when the DEL failed or found none)
			}
		}
		if cl.err != nil {
			return cl.err
		}
	}
	return nil
}

// migrateArgs builds MIGRATE host port "" db timeout [AUTH ...] KEYS
// keys... for moving keys to dst.
func (c *Client) migrateArgs(m *migState, dst Node, keys []string) ([]any, error) {
	addr, err := c.migrateTarget(m, dst) // migrate_target.go
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "6379"
	}
	timeout := c.readTimeout / 2
	if timeout < 100*time.Millisecond {
		timeout = 100 * time.Millisecond
	}
	args := make([]any, 0, 9+len(keys))
	args = append(args, host, port, "", c.cfg.Pool.DB, strconv.FormatInt(timeout.Milliseconds(), 10))
	if p := c.cfg.Pool; p.Password != "" {
		if p.Username != "" {
			args = append(args, "AUTH2", p.Username, p.Password)
		} else {
			args = append(args, "AUTH", p.Password)
		}
	}
	args = append(args, "KEYS")
	for _, k := range keys {
		args = append(args, k)
	}
	return args, nil
}

// movedSet remembers keys seen moved, so that later commands on them skip
// the MIGRATE. It is bounded: a full stripe is emptied, which costs only a
// MIGRATE (answered NOKEY) the next time one of its keys is used.
type movedSet struct {
	seed    maphash.Seed
	stripes [64]movedStripe
}

type movedStripe struct {
	mu   sync.RWMutex
	keys map[string]struct{}
}

// movedStripeMax bounds each stripe (64 of them: about 1M keys in all).
const movedStripeMax = 1 << 14

func newMovedSet() *movedSet {
	s := &movedSet{seed: maphash.MakeSeed()}
	for i := range s.stripes {
		s.stripes[i].keys = make(map[string]struct{})
	}
	return s
}

func (s *movedSet) stripe(k string) *movedStripe {
	return &s.stripes[maphash.String(s.seed, k)%uint64(len(s.stripes))]
}

func (s *movedSet) has(k string) bool {
	st := s.stripe(k)
	st.mu.RLock()
	_, ok := st.keys[k]
	st.mu.RUnlock()
	return ok
}

func (s *movedSet) add(k string) {
	st := s.stripe(k)
	st.mu.Lock()
	if len(st.keys) >= movedStripeMax {
		clear(st.keys)
	}
	st.keys[k] = struct{}{}
	st.mu.Unlock()
}

// moveKeys brings keys to their owners under the current topology before
// a transaction watches them (Tx).
func (c *Client) moveKeys(ctx context.Context, node int, keys []any) error {
	m := c.mig.Load()
	if m == nil {
		return nil
	}
	cl := &call{name: "EXISTS", args: keys, info: lookupCommand("EXISTS"), node: node}
	c.moveFirst(ctx, m, []*call{cl}, false, nil) // WATCH needs the keys where the transaction runs
	if cl.err != nil {
		return cl.err
	}
	return nil
}

// unplaced is the From of a *MigrateError whose key the old topology
// could not place (its Router failed): no node, but the error still says
// which side failed.
func (m *migState) unplaced() Node {
	return Node{Name: "(no owner in the old topology " + m.fromID + ")"}
}

// errSortPattern is the cause of the *MigrateError of a SORT whose BY or
// GET pattern names keys that may still sit at their old owner.
var errSortPattern = errors.New("SORT reads the keys its BY and GET patterns name, which the client cannot move before it runs: refused while they may sit at their old owner")

// sortPatternsMove fails a SORT or SORT_RO whose BY or GET patterns name
// keys (a pattern with '*', other than GET #) that the old topology places
// elsewhere than dst, the node the command runs on: those keys cannot be
// moved first (they depend on the sorted elements), and the command would
// read nothing where some still are, answering a wrong order or values
// without an error. The returned error is a *MigrateError (not sent);
// other commands give nil.
func sortPatternsMove(m *migState, cl *call, dst Node) error {
	if cl.info.Name != "sort" && cl.info.Name != "sort_ro" {
		return nil
	}
	for i := 1; i+1 < len(cl.args); i++ {
		opt, ok := command.Arg(cl.args[i])
		if !ok {
			continue
		}
		switch {
		case strings.EqualFold(opt, "LIMIT"):
			i += 2
			continue
		case strings.EqualFold(opt, "STORE"):
			i++
			continue
		case !strings.EqualFold(opt, "BY") && !strings.EqualFold(opt, "GET"):
			continue
		}
		i++
		pat, ok := command.Arg(cl.args[i])
		star := strings.IndexByte(pat, '*')
		if !ok || star < 0 {
			continue // "#", a constant: no key read
		}
		key := pat
		if f := strings.Index(pat[star+1:], "->"); f >= 0 && star+1+f+2 < len(pat) {
			key = pat[:star+1+f] // a hash's field: the key is before "->"
		}
		src, err := m.from.Route(key)
		if err != nil {
			return &MigrateError{Key: key, From: m.unplaced(), To: dst, Err: err}
		}
		if src.Addr != dst.Addr {
			return &MigrateError{Key: pat, From: src, To: dst, Err: errSortPattern}
		}
	}
	return nil
}
