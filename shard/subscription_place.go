package shard

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
)

// loop keeps the connections in line with what the subscription wants and
// the topology says, and sends the health PINGs, until Close.
func (s *Subscription) loop() {
	defer s.wg.Done()
	tick := time.NewTicker(min(s.opts.PingInterval/4, 50*time.Millisecond))
	defer tick.Stop()
	again := true
	oldRead := time.Now() // the last periodic read of an old cluster's topology
	for {
		select {
		case <-s.done:
			return
		case <-s.kick:
			again = true
		case <-tick.C:
		}
		start := time.Now()
		s.mu.Lock()
		// Before the placement, which follows the tables they correct.
		s.writeRedirects()
		if now := time.Now(); s.readOldPeriodically(now.Sub(oldRead)) {
			oldRead = now
		}
		if again || s.dirty {
			again = !s.reconcile()
			if again {
				// A node is missing: a failover may be under way.
				s.refreshPlacing()
			}
		}
		s.pingIdle()
		s.releaseHolds(nil) // those held for holdLimit
		s.mu.Unlock()
		// A placement looks at every name under the lock: with hundreds
		// of thousands of names it lasts long, and the readers take the
		// lock once per confirmation. Run again at once (each
		// confirmation of a move pokes the loop), it left them one
		// confirmation per placement: a move of 100,000 channels
		// crawled at a few confirmations a second, the Subscribe and
		// Unsubscribe calls waiting behind it. The loop leaves the lock
		// free, after a long pass, for as long as the pass took, up to a
		// quarter of PingInterval (the health PINGs are sent by the loop).
		if d := time.Since(start); d > loopRest {
			select {
			case <-s.done:
				return
			case <-time.After(min(d, s.opts.PingInterval/4)):
			}
		}
	}
}

// loopRest is how long a pass of the loop may hold the lock before the
// loop leaves it free for as long (see loop).
const loopRest = 10 * time.Millisecond

// reconcile dials the nodes that are missing, subscribes what each
// connection lacks and unsubscribes what no longer belongs there. It
// reports whether everything wanted is in place (or asked for). Caller
// holds s.mu; reconcile releases it for a moment every passChunk names
// (see pause), and what changed meanwhile is looked at again: a name
// is subscribed only if still wanted and not sent, unsubscribed only if
// still sent, on a connection still open; what the pass missed (a name
// added, the topology changed) marked the placement dirty for the next.
func (s *Subscription) reconcile() bool {
	if s.closed {
		return true
	}
	s.dirty = false
	s.throttled = false
	s.leaveMovedNodes()
	// Before the pattern unsubscribes below: the fences come first.
	s.notePlacement()
	plan, complete := s.placeChunked()
	if s.closed {
		return true
	}
	if !complete {
		s.failHomeless(plan)
	}
	now := time.Now()
	var carried map[subName][]string // built on first need: see carriedBy
	for addr, names := range plan {
		sc := s.conns[addr]
		if sc == nil {
			complete = false
			if !s.dialing[addr] && s.ready(addr, now) {
				s.dialing[addr] = true
				s.wg.Add(1)
				go s.dial(addr)
			}
			continue
		}
		if !s.ready(addr, now) {
			complete = false
			continue
		}
		groups := map[[2]int][]subName{} // kind, slot (cluster shard channels) -> names
		seen := 0
		for sn := range names {
			if seen++; seen%passChunk == 0 && !s.pause() {
				return true
			}
			if sc.sent[sn] || s.want[sn] == nil {
				continue
			}
			if ws := s.want[sn]; ws != nil && now.Before(ws.holdUntil) {
				complete = false // a MOVED without address: see movedNoAddr
				continue
			}
			if s.homed(sn) {
				// PUBLISH reaches every node: subscribed at the new home
				// while the old one still has it, the name would deliver
				// each message twice. It waits for the old one to let
				// it go (its unsubscribe is below, or waits for its
				// backoff).
				if carried == nil {
					carried = s.carriedBy()
				}
				if slices.ContainsFunc(carried[sn], func(a string) bool { return a != addr }) {
					complete = false
					continue
				}
			}
			key := [2]int{int(sn.kind), -1}
			if sn.kind == kindShard && s.c.cl() != nil {
				key[1] = cluster.Slot(sn.name)
			}
			groups[key] = append(groups[key], sn)
		}
		if s.conns[addr] != sc || sc.closed {
			complete = false // lost meanwhile: dialled again
			continue
		}
		budget := sc.roomFor(s.awaitLimit, sc.awaitedReplies())
		for _, g := range groups {
			// The rest when the confirmations awaited have come down
			// (see maxAwaitedReplies).
			n := 0
			for n < len(g) && budget > 0 {
				budget -= confirmationBytes(g[n])
				n++
			}
			if n < len(g) {
				s.throttled = true
				if n == 0 {
					break
				}
				g = g[:n]
			}
			if !s.subscribeChunked(sc, g) {
				complete = false // the reader sees the failure too
				break
			}
		}
		if s.closed {
			return true
		}
	}
	for addr, sc := range s.conns {
		var stray []subName
		seen := 0
		for sn := range sc.sent {
			if seen++; seen%passChunk == 0 && !s.pause() {
				return true
			}
			if !plan[addr][sn] {
				stray = append(stray, sn)
			}
		}
		if s.conns[addr] != sc || sc.closed {
			continue // lost meanwhile: its names went with it
		}
		stray = slices.DeleteFunc(stray, func(sn subName) bool { return !sc.sent[sn] })
		if len(stray) > 0 && !s.ready(addr, now) {
			// They wait for the node's backoff (it refused an
			// unsubscribe: see unsubscribeRefused).
			complete = false
			continue
		}
		if !s.unsubscribeChunked(sc, stray) {
			if s.closed {
				return true
			}
			continue
		}
		if len(plan[addr]) == 0 && sc.idle() {
			sc.close()
			s.setConn(addr, nil)
		}
	}
	// Throttled names are placed when the confirmations come (onControl
	// pokes the loop), not at every tick: a placement looks at every
	// name, and the reader waits for it.
	return complete
}

// passChunk is how many names a placement looks at before it releases
// the lock for a moment (see pause).
const passChunk = 4096

// pause releases s.mu and takes it again: the calls and the readers that
// wait for it go first. A placement looks at every name under the lock;
// with a million names, held for the whole pass it kept Subscribe,
// Unsubscribe, Ping and the readers' confirmations waiting for seconds.
// It reports false when the subscription was closed meanwhile. Caller
// holds s.mu.
func (s *Subscription) pause() bool {
	s.mu.Unlock()
	s.mu.Lock()
	if s.closed {
		return false
	}
	// A pass may last longer than PingInterval+PingTimeout: a
	// connection that reads nothing for that long is taken for lost.
	s.pingIdle()
	return true
}

// subscribeChunked is holdIfMoving and sc.subscribe for names, passChunk
// names at a time with a pause between: the names are looked at again
// after it (still wanted, not sent, sc still open). It reports false when
// a write failed, or sc or the subscription was closed. Caller holds
// s.mu.
func (s *Subscription) subscribeChunked(sc *subConn, names []subName) bool {
	for first := true; len(names) > 0; first = false {
		if !first {
			if !s.pause() || sc.closed || s.conns[sc.addr] != sc {
				return false
			}
			names = slices.DeleteFunc(names, func(sn subName) bool { return sc.sent[sn] || s.want[sn] == nil })
			if len(names) == 0 {
				break
			}
		}
		n := min(len(names), passChunk)
		s.holdIfMoving(sc, names[:n])
		if err := sc.subscribe(names[:n]); err != nil {
			return false
		}
		names = names[n:]
	}
	return true
}

// unsubscribeChunked unsubscribes sc from names, stray there, passChunk
// names at a time with a pause between: after it, the names no longer
// sent there (the application unsubscribed them meanwhile) are left
// out. Only as many are sent as the confirmations sc awaits leave room
// for (see maxAwaitedReplies, roomFor, waitUnsubRoom): a move of a
// third of hundreds of thousands of names sent all their unsubscribes at
// once, and the server built every confirmation while the reader, which
// needs the lock for each, read them slower; the confirmations awaited
// went far past the bound the subscribes keep, and with them the
// server's output buffer for the connection. The rest stay sent (stray)
// and the subscription throttled: the loop sends them as confirmations
// come (onControl pokes it). It reports false when sc or the
// subscription was closed meanwhile. Caller holds s.mu.
func (s *Subscription) unsubscribeChunked(sc *subConn, names []subName) bool {
	for first := true; len(names) > 0; first = false {
		if !first {
			if !s.pause() || sc.closed || s.conns[sc.addr] != sc {
				return false
			}
			names = slices.DeleteFunc(names, func(sn subName) bool { return !sc.sent[sn] })
			if len(names) == 0 {
				break
			}
		}
		awaited := sc.awaitedUnsubscribes()
		room := sc.roomFor(s.awaitLimit, awaited)
		n := 0
		for n < min(len(names), passChunk) {
			need := confirmationBytes(names[n])
			if need > room && (n > 0 || awaited > 0) {
				break
			}
			room -= need
			n++
		}
		if n == 0 {
			s.throttled = true
			return true
		}
		piece := names[:n]
		names = names[n:]
		for _, sn := range piece {
			delete(sc.sent, sn)
			if ws := s.want[sn]; ws != nil {
				delete(ws.on, sc.addr)
			}
		}
		_ = sc.unsubscribe(piece, nil) // a failure shows in the reader
		if n < passChunk && len(names) > 0 {
			s.throttled = true // no room left for the rest
			return true
		}
	}
	return true
}

// carriedBy returns the connections (by address) that have each homed
// name (see homed) subscribed on their node, or may have: sent, or with
// an unsubscribe not answered yet. Caller holds s.mu.
func (s *Subscription) carriedBy() map[subName][]string {
	out := map[subName][]string{}
	for addr, sc := range s.conns {
		for sn := range sc.sent {
			if s.homed(sn) {
				out[sn] = append(out[sn], addr)
			}
		}
		for _, p := range sc.pending {
			if p.push == "pong" || isSubscribePush(p.push) {
				continue
			}
			for _, sn := range p.names {
				if s.homed(sn) && !slices.Contains(out[sn], addr) {
					out[sn] = append(out[sn], addr)
				}
			}
		}
	}
	return out
}

// place returns, for every node, the names that belong there now; false
// when some name has no node (no topology yet, every shard ejected).
// Caller holds s.mu.
func (s *Subscription) place() (map[string]map[subName]bool, bool) {
	return s.placeWith(false)
}

// placeChunked is place with a pause every passChunk names (see
// reconcile). Caller holds s.mu.
func (s *Subscription) placeChunked() (map[string]map[subName]bool, bool) {
	return s.placeWith(true)
}

func (s *Subscription) placeWith(chunked bool) (map[string]map[subName]bool, bool) {
	plan := map[string]map[subName]bool{}
	complete := true
	var st *clusterState
	home := ""
	if r := s.c.cl(); r != nil {
		if st = r.state.Load(); st == nil {
			return plan, len(s.want) == 0
		}
		home = s.pickHome(st)
	}
	var buf []string
	seen := 0
	for sn := range s.want {
		if seen++; chunked && seen%passChunk == 0 && !s.pause() {
			return plan, false
		}
		buf = s.targets(sn, st, home, buf[:0])
		if len(buf) == 0 {
			complete = false
		}
		for _, addr := range buf {
			m := plan[addr]
			if m == nil {
				m = map[subName]bool{}
				plan[addr] = m
			}
			m[sn] = true
		}
	}
	return plan, complete
}

// targets appends the nodes where sn belongs: in ring mode the shard its
// name hashes to (every shard for a pattern); in cluster mode its slot's
// master (shard channels), every master (keyspace patterns) or home; in
// a cluster client whose migration waits behind the fence, where the old
// topology places it (see waitingFrom).
func (s *Subscription) targets(sn subName, st *clusterState, home string, dst []string) []string {
	c := s.c
	if old := s.waitingFrom(); old != nil {
		if _, cl := old.(*ClusterRouter); sn.kind == kindPattern && !cl {
			// PUBLISH reaches one node of a ring or router.
			for _, n := range old.Nodes() {
				dst = append(dst, n.Addr)
			}
			return dst
		}
		// A cluster broadcasts PUBLISH: one node of the old cluster
		// carries a channel or pattern; a shard channel, its slot's
		// master there, where SPUBLISH goes.
		if n, err := old.Route(sn.name); err == nil {
			dst = append(dst, n.Addr)
		}
		return dst
	}
	if c.cl() == nil {
		// The router the client routes keys by now (it changes when a
		// migration starts or ends), so that PUBLISH and SUBSCRIBE meet.
		r := c.currentRouter()
		if sn.kind == kindPattern {
			for _, n := range r.Nodes() {
				dst = append(dst, n.Addr)
			}
			return c.appendMigrationSides(dst, s.everywhere)
		}
		if n, err := r.Route(sn.name); err == nil {
			dst = append(dst, n.Addr)
		}
		return dst
	}
	switch {
	case st == nil:
	case sn.kind == kindShard:
		dst = append(dst, c.nodes.get(int(st.master[cluster.Slot(sn.name)])).node.Addr)
	case sn.kind == kindPattern && s.everywhere:
		for _, m := range st.masters {
			dst = append(dst, m.Addr)
		}
		dst = c.appendMigrationSources(dst)
	case home != "":
		dst = append(dst, home)
	}
	return dst
}

// appendMigrationSources appends the nodes of the topology a migration
// moves keys away from: the keys not moved yet stay there, and so do
// their keyspace events (an expiry, a write of a process not fenced
// yet), until the migration ends. Without a migration it appends
// nothing.
func (c *Client) appendMigrationSources(dst []string) []string {
	m := c.mig.Load()
	if m == nil {
		return dst
	}
	for _, n := range m.from.Nodes() {
		if !slices.Contains(dst, n.Addr) {
			dst = append(dst, n.Addr)
		}
	}
	return dst
}

// appendMigrationSides appends, during a migration between rings or
// routers, the nodes of both topologies: a pattern is subscribed on each
// from StartMigration to FinishMigration, so that a message is caught on
// whichever node its publisher routes it to — a process switched to the
// new topology before this one, or not yet switched after it — and the
// pattern is in place on the new nodes before this client routes there.
// A PUBLISH reaches one node of a ring, so nothing is delivered twice.
// A cluster's masters, on either side, are added for keyspace patterns
// (everywhere) alone: a cluster broadcasts PUBLISH to every node, and a
// pattern on each master would deliver each message once per master.
func (c *Client) appendMigrationSides(dst []string, everywhere bool) []string {
	m := c.mig.Load()
	if m == nil {
		return dst
	}
	if _, cluster := m.from.(*ClusterRouter); !cluster || everywhere {
		dst = c.appendMigrationSources(dst)
	}
	if m.next != nil && (m.next.cl == nil || everywhere) {
		for _, n := range m.next.router.Nodes() {
			if !slices.Contains(dst, n.Addr) {
				dst = append(dst, n.Addr)
			}
		}
	}
	return dst
}

// confirmedEverywhere reports whether every node where sn belongs has
// confirmed it.
func (s *Subscription) confirmedEverywhere(sn subName, ws *wantState) bool {
	var st *clusterState
	if r := s.c.cl(); r != nil {
		st = r.state.Load()
	}
	for _, addr := range s.targets(sn, st, s.home, nil) {
		if !ws.on[addr] {
			return false
		}
	}
	return true
}

// pickHome returns the node that carries the channels and patterns in
// cluster mode: the current one while it is a node of the cluster and
// answers, else a random master that is not backing off. A home demoted
// to a replica (a manual failover) stays: the cluster broadcasts PUBLISH
// to every node, replicas included, and the names moved to another
// master were unsubscribed at the old home first (on both, each message
// would come twice), subscribed nowhere until the new home confirmed
// them: what was published in between was lost, for nothing.
func (s *Subscription) pickHome(st *clusterState) string {
	now := time.Now()
	if s.home != "" && s.ready(s.home, now) &&
		slices.ContainsFunc(st.allNodes, func(n Node) bool { return n.Addr == s.home }) {
		return s.home
	}
	var ok []string
	for _, m := range st.masters {
		if m.Addr == s.home && s.ready(m.Addr, now) {
			return s.home
		}
		if !s.ready(m.Addr, now) {
			continue
		}
		if i, known := s.c.nodes.lookup(m.Addr); known && s.c.nodes.get(i).down.Load() {
			continue
		}
		ok = append(ok, m.Addr)
	}
	if len(ok) == 0 {
		s.home = ""
		return ""
	}
	s.home = ok[rand.IntN(len(ok))]
	return s.home
}

// homed reports whether sn is placed on the home node (cluster mode):
// such a name moves to another master at once when its node fails.
func (s *Subscription) homed(sn subName) bool {
	return s.c.cl() != nil && (sn.kind == kindChannel || (sn.kind == kindPattern && !s.everywhere)) &&
		s.waitingFrom() == nil
}

// spread reports whether sn is carried by several nodes at once: a
// pattern in ring mode (every shard), or placed by a ring or router that
// a cluster client's waiting migration leaves (see waitingFrom), or a
// keyspace pattern (every master or shard).
func (s *Subscription) spread(sn subName) bool {
	if sn.kind != kindPattern {
		return false
	}
	if s.c.cl() == nil || s.everywhere {
		return true
	}
	old := s.waitingFrom()
	_, cl := old.(*ClusterRouter)
	return old != nil && !cl
}

// refreshPlacing asks for a read of the topology that places the
// subscription's names: while a client built with Config.Migration waits,
// the old cluster's (waitingFrom), where they are; reading the client's
// own cluster left the old table as it was. Caller holds s.mu.
func (s *Subscription) refreshPlacing() {
	if old, ok := s.waitingFrom().(*ClusterRouter); ok && old != s.c.cl() && !s.c.closed.Load() {
		s.c.readOldLater(old, "") // rate limited; not under s.mu: it dials
		return
	}
	s.refreshTopology()
}

// readOldPeriodically asks for a read of the topology of the cluster a
// Config.Migration moves away from, when the subscription has names
// placed by it (keyspace patterns, or any name while the migration waits:
// see waitingFrom) and since, the time since the last such read, is at
// least the client's RefreshInterval. That table is otherwise read only
// when a command or the subscription meets a redirect or a node that
// fails: a master of the old cluster demoted by hand (CLUSTER FAILOVER)
// lives on as a replica, whose connection stays healthy, and the
// subscription stayed there, missing what the promoted master emits
// (its expiries, its shard channels' messages), for the rest of the
// migration. It reports whether it asked. Caller holds s.mu.
func (s *Subscription) readOldPeriodically(since time.Duration) bool {
	c := s.c
	every := c.clusterOpts().RefreshInterval
	if every <= 0 || since < every || len(s.want) == 0 || c.closed.Load() {
		return false
	}
	m := c.mig.Load()
	if m == nil {
		return false
	}
	old, ok := m.from.(*ClusterRouter)
	if !ok || old == c.cl() || (!s.everywhere && s.waitingFrom() == nil) {
		return false
	}
	c.readOldLater(old, "") // rate limited; in the background
	return true
}

// waitingFrom returns the old topology of a cluster client built with
// Config.Migration while that migration waits behind the fence
// (PhaseWaiting): the client routes PUBLISH and SPUBLISH by it then
// (fencedLocator), so its channels, shard channels and patterns are
// placed by it too, where its own messages and those of the processes
// not switched yet go; they move to the cluster at the switch (advance).
// Nil otherwise, and for keyspace subscriptions, which listen to both
// sides (appendMigrationSources). A ring or router client routes by the
// old topology itself while waiting (switchTo), and needs none of this.
func (s *Subscription) waitingFrom() Router {
	if s.everywhere {
		return nil
	}
	m := s.c.mig.Load()
	if m == nil || m.next != nil || m.phase.Load() != int32(PhaseWaiting) || s.c.cl() == nil {
		return nil
	}
	return m.from
}

// subscribedAgain reports whether addr's confirmation of sn, announced
// and not confirmed there now, subscribes it again (Stats().Resubscribed):
// a name carried by one node moved there or came back after a lost
// connection; a name carried by several came back to a node that had it.
// A node that joins is no re-subscription (a ring shard added by a
// migration has the patterns before any message is routed there), except
// a master of the client's own cluster under keyspace patterns: it
// became a master of slots (a promoted replica, a node given slots)
// before the subscription could see it, and the events of their keys
// between then and its confirmation were lost. A manual failover, which
// loses no connection, showed in no counter. Caller holds s.mu.
func (s *Subscription) subscribedAgain(sn subName, ws *wantState, addr string) bool {
	return !s.spread(sn) || ws.had[addr] || (s.everywhere && s.ownMaster(addr))
}

// ownMaster reports whether addr is a master of the client's own
// cluster's table (false in ring mode).
func (s *Subscription) ownMaster(addr string) bool {
	r := s.c.cl()
	if r == nil {
		return false
	}
	st := r.state.Load()
	return st != nil && slices.ContainsFunc(st.masters, func(n Node) bool { return n.Addr == addr })
}

// ready reports whether addr may be tried now.
//
// A node that the client's health checks saw down and now see answering
// again is tried at once, without waiting for the rest of its backoff.
func (s *Subscription) ready(addr string, now time.Time) bool {
	r := s.retry[addr]
	if r == nil || !now.Before(r.next) {
		return true
	}
	if i, ok := s.c.nodes.lookup(addr); ok {
		down := s.c.nodes.get(i).down.Load()
		if down {
			r.sawDown = true
		} else if r.sawDown {
			r.sawDown = false
			r.next = now
			return true
		}
	}
	return false
}

// dial opens a connection to addr for the subscription.
func (s *Subscription) dial(addr string) {
	defer s.wg.Done()
	s.st.dials.Add(1)
	epoch := s.nodeEpoch(addr) // before the dial, which may reach the old server
	conn, err := s.c.pools.Dial(s.ctx, addr)
	if err == nil && s.setup != nil {
		ctx, cancel := context.WithTimeout(s.ctx, s.opts.PingTimeout)
		_, err = redis.DoContext(conn, ctx, s.setup[0].(string), s.setup[1:]...)
		cancel()
		if err != nil {
			conn.Close()
			err = errtext.Errorf("shardis: %v %v: %w", s.setup[0], s.setup[1], err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.dialing, addr)
	if s.closed || s.closing.Load() {
		if err == nil {
			conn.Close()
		}
		return
	}
	if err != nil {
		s.st.dialErrors.Add(1)
		s.backoff(addr, err)
		s.failWaitersAt(addr, &NodeError{Node: s.node(addr), Err: err})
		return
	}
	sc := newSubConn(s, addr, conn)
	sc.epoch = epoch
	if !s.track(sc) { // Close has begun
		conn.Close()
		return
	}
	s.setConn(addr, sc)
	s.wg.Add(1)
	go sc.read()
	s.dirty = true
	s.poke()
}

// failWaitersAt tells the Subscribe calls waiting for names placed on
// addr that the attempt failed; the names stay and are retried. Names on
// the home node in cluster mode move to another master instead.
func (s *Subscription) failWaitersAt(addr string, err error) {
	plan, _ := s.place()
	for sn := range plan[addr] {
		ws := s.want[sn]
		if ws == nil || len(ws.waiters) == 0 || s.homed(sn) {
			continue
		}
		for _, w := range ws.waiters {
			w.settle(err)
		}
		ws.waiters = nil
	}
}

// failHomeless tells the Subscribe calls waiting for names that no node
// can carry now (every ring shard ejected, no cluster master to turn to)
// that none can: no attempt to reach a node would ever answer them. The
// names stay and are subscribed once a node can carry them. The error
// wraps ErrNoNodes and, in ring mode, the router's own error for the
// name (a user's Router may refuse a name with an error of its own: the
// cause the caller needs), or else the failures of the masters (cluster
// mode) or of the down shards (ring mode). Caller holds s.mu.
func (s *Subscription) failHomeless(plan map[string]map[subName]bool) {
	var err error
	mastersDone := false // mastersErr was looked at (cluster mode)
	for sn, ws := range s.want {
		if len(ws.waiters) == 0 {
			continue
		}
		placed := false
		for _, names := range plan {
			if names[sn] {
				placed = true
				break
			}
		}
		if placed {
			continue
		}
		if err == nil {
			err = fmt.Errorf("%w: no node can carry the names now; they stay and are subscribed once one can", ErrNoNodes)
		}
		werr := err
		if rerr := s.routeErr(sn); rerr != nil {
			werr = errtext.Errorf("%w: %s %q: %w", ErrNoNodes, sn.kind.subCommand(), sn.name, rerr)
		} else if !mastersDone {
			mastersDone = true
			if merr := s.mastersErr(); merr != nil {
				err = errtext.Errorf("%w: no master can carry the names now; they stay and are subscribed once one can: %w", ErrNoNodes, merr)
				werr = err
			} else if derr := s.shardsDownErr(); derr != nil {
				err = errtext.Errorf("%w: every shard is down; the names stay and are subscribed once one is back: %w", ErrNoNodes, derr)
				werr = err
			}
		}
		for _, w := range ws.waiters {
			w.settle(werr)
		}
		ws.waiters = nil
	}
}

// mastersErr returns, in cluster mode, why no master can be used now:
// for each master, the last failure the subscription saw on it (while it
// backs off), or the cause the client's health checks keep it down for.
// It returns nil in ring mode or when there is none. Caller holds s.mu.
func (s *Subscription) mastersErr() error {
	r := s.c.cl()
	if r == nil {
		return nil
	}
	st := r.state.Load()
	if st == nil {
		return nil
	}
	var errs []error
	now := time.Now()
	for _, m := range st.masters {
		if rd := s.retry[m.Addr]; rd != nil && rd.err != nil && now.Before(rd.next) {
			if ne, ok := rd.err.(*NodeError); ok {
				errs = append(errs, ne)
			} else {
				errs = append(errs, &NodeError{Node: s.node(m.Addr), Err: rd.err})
			}
			continue
		}
		if i, ok := s.c.nodes.lookup(m.Addr); ok {
			if ns := s.c.nodes.get(i); ns.down.Load() {
				errs = append(errs, &NodeError{Node: ns.node, Err: ns.downErr()})
			}
		}
	}
	return errors.Join(errs...)
}

// shardsDownErr returns, in ring mode (or with the user's Router), why
// the shards cannot be used now: for each shard the client's health
// checks keep down (and auto-eject took out of the ring), the cause it is
// down for, as a *NodeError matching ErrNodeDown; else the last failure
// the subscription saw on it while it backs off. It returns nil in
// cluster mode or when no shard is down (every shard ejected by hand,
// say). Caller holds s.mu.
func (s *Subscription) shardsDownErr() error {
	if s.c.cl() != nil {
		return nil
	}
	var errs []error
	now := time.Now()
	for _, n := range s.c.currentRouter().Nodes() {
		if ne := s.c.downNodeErr(n.Addr); ne != nil {
			errs = append(errs, ne)
			continue
		}
		if rd := s.retry[n.Addr]; rd != nil && rd.err != nil && now.Before(rd.next) {
			if ne, ok := rd.err.(*NodeError); ok {
				errs = append(errs, ne)
			} else {
				errs = append(errs, &NodeError{Node: s.node(n.Addr), Err: rd.err})
			}
		}
	}
	return errors.Join(errs...)
}

// routeErr returns the error the router gives for sn's name in ring mode
// when it is not ErrNoNodes itself (which the caller's error wraps
// already), or nil.
func (s *Subscription) routeErr(sn subName) error {
	if s.c.cl() != nil || sn.kind == kindPattern {
		return nil
	}
	if _, err := s.c.currentRouter().Route(sn.name); err != nil && !errors.Is(err, ErrNoNodes) {
		return err
	}
	return nil
}

// node returns the Node for addr, with its configured name.
func (s *Subscription) node(addr string) Node {
	if i, ok := s.c.nodes.lookup(addr); ok {
		return s.c.nodes.get(i).node
	}
	return Node{Name: addr, Addr: addr}
}

// lost handles the failure of a connection's reads.
func (s *Subscription) lost(sc *subConn, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc.closed || s.closed || s.closing.Load() {
		return // closed on purpose
	}
	s.lostLocked(sc, err)
}

// nodeEpoch returns the epoch of the node at addr (nodes.go): it changes
// when the node's address moves to another server (a Sentinel shard's
// failover).
func (s *Subscription) nodeEpoch(addr string) int64 {
	if i, ok := s.c.nodes.lookup(addr); ok {
		return s.c.nodes.get(i).epoch.Load()
	}
	return 0
}

// errMasterMoved is the cause of a connection given up because its node
// moved to another server.
var errMasterMoved = errors.New("shardis: the shard's master moved to another server (Sentinel failover)")

// leaveMovedNodes gives up, as lost, the connections whose node moved to
// another server since they were dialled (a Sentinel shard's failover
// that left the old master running, now a replica, that still answers:
// nothing else would take the connection for lost), and dials the node
// again at once, at its new server. Keyspace events, which only the new
// master emits for its expiries, and the names the old one no longer
// gets, follow. Caller holds s.mu.
func (s *Subscription) leaveMovedNodes() {
	for addr, sc := range s.conns {
		if sc.epoch == s.nodeEpoch(addr) {
			continue
		}
		s.lostLocked(sc, errMasterMoved)
		delete(s.retry, addr) // the new server is ready: no backoff
	}
}

// lostLocked is lost; caller holds s.mu.
func (s *Subscription) lostLocked(sc *subConn, err error) {
	if !sc.closed {
		sc.lostErr = err
	}
	sc.close()
	if s.conns[sc.addr] == sc {
		s.setConn(sc.addr, nil)
	}
	s.st.lost.Add(1)
	s.fenceDone(sc)
	// What it held back, and what others held back for it, come first:
	// they are older than the confirmations below.
	s.releaseHolds(sc)
	// The application's unsubscribes it had not answered: the server
	// dropped their names with the connection.
	for _, p := range sc.pending {
		for _, sn := range p.names {
			if p.tally != nil && p.tally.done(sn) {
				s.releasePattern(sn)
				s.q.push(redis.Subscription{Kind: p.push, Channel: sn.name, Count: len(s.want)})
			}
		}
	}
	sc.pending, sc.unsub = nil, nil
	nerr := &NodeError{Node: s.node(sc.addr), Err: err}
	var st *clusterState
	if r := s.c.cl(); r != nil {
		st = r.state.Load()
	}
	for sn := range sc.sent {
		ws := s.want[sn]
		if ws == nil {
			continue
		}
		delete(ws.on, sc.addr)
		// Not a name the connection still had to unsubscribe (it belongs
		// elsewhere now): its waiters wait for another node.
		if len(ws.waiters) > 0 && !s.homed(sn) && slices.Contains(s.targets(sn, st, s.home, nil), sc.addr) {
			for _, w := range ws.waiters {
				w.settle(nerr)
			}
			ws.waiters = nil
		}
	}
	s.backoff(sc.addr, err)
	s.dirty = true
	s.poke()
}

// pingIdle sends a health PING on every connection that has been silent
// for PingInterval. Caller holds s.mu.
func (s *Subscription) pingIdle() {
	now := time.Now()
	for _, sc := range s.conns {
		if now.Sub(time.Unix(0, sc.lastRead.Load())) >= s.opts.PingInterval && now.Sub(sc.lastPing) >= s.opts.PingInterval {
			_ = sc.ping(healthPing, false) // a failure shows in the reader
		}
	}
}
