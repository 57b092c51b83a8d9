package shard

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/shardis/shardis/ring"
)

// RingRouter routes keys over plain Redis servers with a consistent-hash
// ring (package ring). It is safe for concurrent use.
//
// With ejection (see Client's auto-eject option) a shard can leave the ring
// and come back; lookups always see one complete ring, old or new.
//
// Build one with NewRingRouter. The zero RingRouter has no node: it routes
// every key to ErrNoNodes.
type RingRouter struct {
	cfg   ring.Config
	nodes []Node // in configured order, for the full ring

	full    *ring.Ring // every configured shard
	mu      sync.Mutex // serialises Eject/Restore
	ejected []bool
	byHand  []bool // ejected by Eject, not by AutoEject: held until Restore
	state   atomic.Pointer[ringState]
	watch   topologyWatchers // told of every ejection and restore (subscriptions)
	// told is done once the client tells its subscriptions of this
	// router's ejections and restores (a router a migration brought in:
	// they watch the client's first router alone).
	told sync.Once
	// line is the succession of ring routers this one belongs to (nil
	// for the zero RingRouter).
	line atomic.Pointer[ejectLine]
}

// ejectLine is the succession of the ring routers a client routed by,
// one after the other (its migrations' switches, ends and aborts). Its
// mu orders every Eject, Restore or AutoEject change of its routers with
// the carrying of their ejections to the next one (succeed): a change
// made on a router the client stopped routing by is made on the one it
// routes by too, so that an operator's Eject or Restore racing a
// migration's switch (on the router Client.Router returned just before)
// is never lost. Its lock is taken before any router's mu.
type ejectLine struct {
	mu  sync.Mutex
	cur *RingRouter // the router of the line the client routes by
}

// lockLine locks rr's line and returns it, or returns nil for the zero
// RingRouter. A router that joins another line meanwhile (succeed) is
// followed to it.
func (rr *RingRouter) lockLine() *ejectLine {
	for {
		l := rr.line.Load()
		if l == nil {
			return nil
		}
		l.mu.Lock()
		if rr.line.Load() == l {
			return l
		}
		l.mu.Unlock()
	}
}

// ringState is one immutable ring plus the map from its shard indexes
// back to the configured node indexes.
type ringState struct {
	r     *ring.Ring
	toCfg []int     // ring shard index -> configured node index
	v     *ringView // the locator fixed to this state (ring_view.go)
}

// store makes st the router's ring state.
func (rr *RingRouter) store(st *ringState) {
	st.v = &ringView{rr: rr, st: st}
	rr.state.Store(st)
}

// view returns the locator fixed to st, a state of rr.
func (st *ringState) view(rr *RingRouter) locator {
	if st.v == nil {
		return &ringView{rr: rr, st: st}
	}
	return st.v
}

// NewRingRouter builds the ring for cfg.
func NewRingRouter(cfg ring.Config) (*RingRouter, error) {
	r, err := ring.New(cfg)
	if err != nil {
		return nil, err
	}
	return ringRouterOf(r), nil
}

// ringRouterOf returns a router over every shard of r.
func ringRouterOf(r *ring.Ring) *RingRouter {
	shards := r.Shards()
	rr := &RingRouter{cfg: r.Config(), full: r, ejected: make([]bool, len(shards)), byHand: make([]bool, len(shards))}
	rr.line.Store(&ejectLine{cur: rr})
	rr.nodes = make([]Node, len(shards))
	toCfg := make([]int, len(shards))
	for i, s := range shards {
		rr.nodes[i] = Node{Name: s.Label(), Addr: s.Addr}
		toCfg[i] = i
	}
	rr.store(&ringState{r: r, toCfg: toCfg})
	return rr
}

// Route returns the node that serves key.
func (rr *RingRouter) Route(key string) (Node, error) {
	i, err := rr.Index(key)
	if err != nil {
		return Node{}, err
	}
	return rr.nodes[i], nil
}

// Index returns the configured index of the node that serves key.
func (rr *RingRouter) Index(key string) (int, error) {
	st := rr.state.Load()
	if st == nil || st.r == nil { // the zero RingRouter, or every shard ejected
		return -1, ErrNoNodes
	}
	return st.toCfg[st.r.Locate(key)], nil
}

// IndexBytes is Index for a key given as bytes; it does not allocate.
func (rr *RingRouter) IndexBytes(key []byte) (int, error) {
	st := rr.state.Load()
	if st == nil || st.r == nil {
		return -1, ErrNoNodes
	}
	return st.toCfg[st.r.LocateBytes(key)], nil
}

// Nodes returns every configured node in configured order, ejected or not.
func (rr *RingRouter) Nodes() []Node {
	out := make([]Node, len(rr.nodes))
	copy(out, rr.nodes)
	return out
}

// node returns configured node i without copying the slice.
func (rr *RingRouter) node(i int) Node { return rr.nodes[i] }

// Ring returns the full ring, with every configured shard, ejected or not
// (nil for the zero RingRouter). The ring is immutable and built once: the
// call costs nothing.
func (rr *RingRouter) Ring() *ring.Ring { return rr.full }

// Ejected reports whether configured node i is out of the ring.
func (rr *RingRouter) Ejected(i int) bool {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return i >= 0 && i < len(rr.ejected) && rr.ejected[i]
}

// Eject takes configured node i out of the ring: its keys rehash to the
// other shards. Suitable for caches only: the keys come back to node i, with
// whatever stale values it still holds, when it is restored. Ejecting a node
// that is already out changes nothing (and tells no subscription).
//
// A node ejected so stays out until Restore, whatever its health: with
// HealthOptions.AutoEject, the client puts back only the nodes it took out
// itself when they answer again, not one taken out by hand (for
// maintenance, say), even if it went down and came back meanwhile. Ejecting
// by hand a node that AutoEject took out makes it one ejected by hand.
//
// The ejection holds when a migration (Client.StartMigration,
// FinishMigration, AbortMigration) gives the client another ring router:
// the router it routes by next has the same node (the same address) out
// too, and one restored stays in; a node that the next topology lacks
// leaves its state behind. An Eject or Restore made on a router the client
// no longer routes by (one Client.Router returned before the switch) is
// made on the router it routes by too. A Sentinel shard's failover keeps
// the router.
func (rr *RingRouter) Eject(i int) error {
	_, err := rr.setEjected(i, true, true)
	return err
}

// Restore puts an ejected node back into the ring, whoever ejected it.
// Restoring a node that is in the ring changes nothing. A node restored
// while its server is down is taken out again by HealthOptions.AutoEject
// only when it goes down again, not for the failures that came before.
func (rr *RingRouter) Restore(i int) error {
	_, err := rr.setEjected(i, false, true)
	return err
}

// setEjected takes node i out of the ring (out) or puts it back, and
// reports whether that changed the ring. Only a change is told to the
// watchers (subscriptions re-place their names on each telling) and, by
// the health checker, to the NodeState hook as NodeEjected or NodeRestored:
// a node the user ejected by hand that then goes down was not ejected by
// AutoEject, and a second telling would count one ejection twice.
//
// byHand says the call is Eject or Restore, not AutoEject's: an ejection
// by hand is held against AutoEject's restores (which change nothing for
// it), and takes over one by AutoEject.
func (rr *RingRouter) setEjected(i int, out, byHand bool) (changed bool, err error) {
	var told *RingRouter // the line's current router, changed too
	defer func() {
		if changed {
			rr.watch.notify()
		}
		if told != nil {
			told.watch.notify()
		}
	}()
	if l := rr.lockLine(); l != nil {
		defer l.mu.Unlock()
		changed, err = rr.setEjectedLocked(i, out, byHand)
		if err == nil && l.cur != nil && l.cur != rr {
			// rr was replaced: the change is the operator's for the
			// router the client routes by now (the same address).
			if j := l.cur.indexOf(rr.nodes[i].Addr); j >= 0 {
				if c, err := l.cur.setEjectedLocked(j, out, byHand); c && err == nil {
					told = l.cur
				}
			}
		}
		return changed, err
	}
	return rr.setEjectedLocked(i, out, byHand)
}

// indexOf returns the configured index of the node at addr, or -1.
func (rr *RingRouter) indexOf(addr string) int {
	for j, n := range rr.nodes {
		if n.Addr == addr {
			return j
		}
	}
	return -1
}

// setEjectedLocked is setEjected without the line and the telling of
// the watchers: the caller holds rr's line's mu, if rr has one, and
// tells rr's watchers of a change.
func (rr *RingRouter) setEjectedLocked(i int, out, byHand bool) (changed bool, err error) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if i < 0 || i >= len(rr.nodes) {
		return false, fmt.Errorf("%w: no shard with index %d", ErrBadConfig, i)
	}
	wasByHand := rr.byHand[i]
	if byHand {
		rr.byHand[i] = out
	} else if !out && wasByHand {
		return false, nil // the operator's to restore
	}
	if rr.ejected[i] == out {
		return false, nil
	}
	rr.ejected[i] = out
	if err := rr.rebuild(); err != nil {
		rr.ejected[i] = !out
		rr.byHand[i] = wasByHand
		return false, err
	}
	return true, nil
}

// rebuild makes the ring of the shards rr.ejected leaves in the router's
// ring state. The caller holds rr.mu.
func (rr *RingRouter) rebuild() error {
	var gone, toCfg []int
	for j, e := range rr.ejected {
		if e {
			gone = append(gone, j)
		} else {
			toCfg = append(toCfg, j)
		}
	}
	if len(toCfg) == 0 {
		rr.store(&ringState{})
		return nil
	}
	// As twemproxy rebuilds its continuum: a ketama shard that the
	// remaining weights leave without a point owns no key, instead of
	// keeping the down shard in the ring.
	r, err := rr.full.Without(gone...)
	if err != nil {
		return err
	}
	rr.store(&ringState{r: r, toCfg: toCfg})
	return nil
}

// succeed makes rr the router of prev's line that the client routes by,
// with prev's ejections (adoptEjections), before the client routes by rr
// (a migration's switch, its end or its abort): from then on, an Eject or
// Restore made on prev, or on any router before it, is made on rr too.
// Holding the line's lock throughout, no change to prev falls between
// the reading of its ejections and rr's taking over. The only failure, a
// ring that cannot be built without shards rr already validated, leaves
// rr's ejections as they were; rr joins the line all the same.
func (rr *RingRouter) succeed(prev *RingRouter) error {
	if prev == nil {
		return nil
	}
	l := prev.lockLine()
	if l == nil { // the zero RingRouter has no node to carry
		return nil
	}
	changed, err := rr.adoptEjections(prev)
	if rr.line.Load() != nil { // the zero RingRouter cannot be ejected from
		rr.line.Store(l)
		l.cur = rr
	}
	l.mu.Unlock()
	if changed {
		rr.watch.notify()
	}
	return err
}

// adoptEjections gives each node of rr that prev also has (the same
// address: the same server, or the same Sentinel shard) the ejection prev
// gives it, by hand or by AutoEject, in or out: rr is about to replace
// prev as the router the client routes by (a migration's switch, its end
// or its abort), and a shard the operator took out for maintenance must
// not come back into the ring, nor one put back leave it, because the
// client changed routers. A node prev lacks keeps its state in rr (in the
// ring, for a router built for a new topology). prev is read first, then
// rr changed: the two locks are never held together. The caller holds
// prev's line's mu and tells rr's watchers when changed is true.
func (rr *RingRouter) adoptEjections(prev *RingRouter) (changed bool, err error) {
	if prev == nil || prev == rr {
		return false, nil
	}
	type state struct{ out, byHand bool }
	was := map[string]state{}
	prev.mu.Lock()
	for j, n := range prev.nodes {
		if j < len(prev.ejected) {
			was[n.Addr] = state{prev.ejected[j], prev.byHand[j]}
		}
	}
	prev.mu.Unlock()
	rr.mu.Lock()
	defer rr.mu.Unlock()
	ejected, byHand := append([]bool(nil), rr.ejected...), append([]bool(nil), rr.byHand...)
	for i, n := range rr.nodes {
		st, ok := was[n.Addr]
		if !ok {
			continue
		}
		changed = changed || rr.ejected[i] != st.out
		rr.ejected[i], rr.byHand[i] = st.out, st.byHand
	}
	if !changed {
		return false, nil
	}
	if err := rr.rebuild(); err != nil {
		rr.ejected, rr.byHand = ejected, byHand
		return false, err
	}
	return true, nil
}
