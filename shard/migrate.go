package shard

import (
	"context"
	"errors"
	"fmt"
	"github.com/shardis/shardis/ring"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard/command"
)

// Migration describes a live change of topology: keys move from the
// topology From to the one the client routes by (its own Config). See
// docs/resharding.md for the protocol that a deployment of many processes
// follows.
//
// A migration starts behind a fence (migrate_fence.go): the client routes
// by the old topology and moves nothing until a marker that the mover sets
// on the old nodes says every process runs the migrating config
// (MigrationInfo.Phase; Armed skips the fence). Once armed, the client
// routes every key by its own topology (the new one). A key whose owner is the same in both
// topologies is untouched. For a key whose owner changes, the client first
// makes sure the key sits at its new owner — MIGRATE ... KEYS on the old
// owner, which moves it atomically and answers NOKEY when there is nothing
// to move — and then runs the command there. The moves of a pipeline or a
// multi-key command are batched: one MIGRATE per (old owner, new owner)
// pair.
type Migration struct {
	// From is the topology the keys are moving away from: a ring (Shards),
	// a cluster (Seeds) or a Router. Only its placement (Mode, Shards,
	// Hash, KeyHash, Tag, Seeds, Router) counts: connections use the
	// client's own pool options, so both topologies share credentials,
	// TLS and database. A From whose pool options ask for TLS the client
	// does not use, or give credentials other than the client's, is
	// refused (ErrBadConfig) rather than ignored.
	From *Config
	// Addrs maps a node address, as the client dials it, to the address
	// the old owners reach it at (MIGRATE connects from server to server).
	// Unlisted addresses are used as they are.
	Addrs map[string]string
	// Armed starts the client in PhaseArmed, moving keys at once without
	// waiting for the fence's marker (migrate_fence.go). Only for a
	// process that runs after the fence is armed (the mover) or that is
	// alone; every other process must wait for the marker.
	Armed bool
}

// ErrMigration is matched (errors.Is) by every *MigrateError and by the
// errors of StartMigration, FinishMigration and AbortMigration.
var ErrMigration = errors.New("shardis: migration")

// MigrateError reports a key that could not be brought to its new owner
// before its command ran; the command was not sent, unless Sent says so.
type MigrateError struct {
	Key string
	// From is the old owner; when the old topology could not place the
	// key (its Router failed, the cause is Err), a Node whose Name says so.
	From Node
	To   Node // the new owner
	// Sent reports that the command itself was sent and may have taken
	// effect: a blind overwrite (SET without a condition, SETEX, PSETEX)
	// is written at the new owner without moving its key, and fails with
	// Sent set when the old copy could not be deleted afterwards or its
	// expiry passed in flight. When false, the command was not sent.
	Sent bool
	Err  error
}

// Error implements error.
func (e *MigrateError) Error() string {
	return fmt.Sprintf("shardis: moving key %q from %s to %s: %s", e.Key, e.From, e.To, errtext.Cause(e.Err))
}

// Unwrap returns the cause.
func (e *MigrateError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrMigration) true.
func (e *MigrateError) Is(target error) bool { return target == ErrMigration }

// migState is one migration: the old topology and what the executor needs
// to move keys out of it. It never changes once installed.
type migState struct {
	from   Router
	fromID string // TopologyID of from
	toID   string
	addrs  map[string]string
	src    map[string]int // old node address -> client node index
	moved  *movedSet
	beacon *beacons
	busy   atomic.Int64 // old copies deleted because the new owner had the key

	// overwrites counts the blind overwrites of this migration in flight
	// (migrate_overwrite.go): the fence of a rollback that turns it around
	// waits for them (drainOld).
	overwrites atomic.Int64
	// active counts the executions planned by the new topology of a ring
	// or router client from PhaseFenced on (fencePlan.active): the fence
	// of a rollback that turns it around waits for them (drainOld).
	active    atomic.Int64
	activeCut fenceCut // ends the blocking ones that outlast a rollback's wait

	// What the client did for the migration (MigrationInfo).
	moves, overwrote, oldReads, failures atomic.Int64

	// The fence (migrate_fence.go).
	advMu sync.Mutex   // serialises advance
	phase atomic.Int32 // a MigrationPhase; only grows
	// switched says that the switch out of PhaseWaiting is complete: the
	// executions planned by the old topology were waited for (advance).
	switched atomic.Bool
	armed    chan struct{} // closed at PhaseArmed
	ended    chan struct{} // closed when the client leaves it unarmed (end)
	endOnce  sync.Once
	waiting  atomic.Int64 // executions routed by the old topology
	cut      fenceCut     // ends the old plans that outlast the switch's wait (migrate_plan.go)
	fromLoc  locator      // the old topology's placement
	next     *topology    // ring or router client: its routing from PhaseFenced on
	prev     *migState    // a rollback: the armed migration it turns around

	lanesMu sync.Mutex
	lanes   map[[2]string]*moveLane // (old, new) address -> its moves
}

// topology is a ring or router client's current placement; StartMigration
// and AbortMigration replace it. A cluster (cl non-nil) makes the client a
// cluster client while it routes by it (migrate_cluster.go).
type topology struct {
	loc    locator
	router Router
	id     string
	cl     *ClusterRouter
}

// liveLocator is the locator of a ring or router client: it follows the
// current topology, so that a migration can change it at run time.
type liveLocator struct{ c *Client }

func (l liveLocator) locate(key any) (int, int, error) {
	return l.c.topo.Load().loc.locate(key)
}

func (l liveLocator) groupLabel(group int) string {
	return l.c.topo.Load().loc.groupLabel(group)
}

// initTopology makes a ring or router client's placement replaceable and
// installs cfg.Migration, if any, on fromRing, the ring of its From that
// cfg's validation built (nil: none). New calls it last.
func (c *Client) initTopology(ctx context.Context, cfg Config, ids configIDs, fromRing *ring.Ring) error {
	c.migMu = new(sync.Mutex)
	if c.cl() == nil {
		c.outCut.Store(new(fenceCut))
		c.topo.Store(&topology{loc: c.loc, router: c.router, id: ids.id})
		c.loc = liveLocator{c}
	}
	if cfg.Migration == nil {
		return nil
	}
	from, err := c.routerFor(ctx, *cfg.Migration.From, fromRing)
	if err != nil {
		return err
	}
	if err := c.distinctServers(ctx, from.Nodes(), c.currentRouter().Nodes()); err != nil { // migrate_alias.go
		return err
	}
	var next *topology
	if c.cl() == nil {
		next = c.topo.Load()
	} else {
		c.loc = fencedLocator{c: c, inner: c.loc}
	}
	return c.installMigration(ctx, from, ids.from, ids.id, cfg.Migration.Addrs,
		next, cfg.Migration.Armed, nil)
}

// currentRouter returns the router the client routes by now.
func (c *Client) currentRouter() Router {
	if t := c.topo.Load(); t != nil {
		return t.router
	}
	return c.router
}

// routerFor builds a router for another topology: a ring (on built, the
// ring of cfg its validation built, when not nil), the user's Router, or a
// cluster's slot table (discovered now, through the client's pools, and
// not refreshed).
func (c *Client) routerFor(ctx context.Context, cfg Config, built *ring.Ring) (Router, error) {
	switch {
	case cfg.Router != nil:
		g := &guardedRouter{c: c, r: cfg.Router} // a panic is contained (callback.go)
		if err := g.load(); err != nil {
			return nil, err
		}
		return g, nil
	case cfg.Mode == ModeCluster:
		discover := cluster.Discover
		if c.cfg.Pool.TLSConfig != nil {
			discover = cluster.DiscoverTLS
		}
		t, err := discover(ctx, cfg.Seeds, c.topologyDialer)
		if err != nil {
			return nil, errtext.Errorf("%w: discovering the cluster %v: %w", ErrMigration, cfg.Seeds, err)
		}
		r := newClusterRouter(c.nodes, cfg.Seeds)
		r.install(t)
		return r, nil
	case built != nil:
		return ringRouterOf(built), nil
	default:
		rr, err := NewRingRouter(cfg.RingConfig())
		if err != nil {
			return nil, errtext.Errorf("%w: %w", ErrBadConfig, err)
		}
		return rr, nil
	}
}

// installMigration makes from the topology that keys move away from.
// next is a ring or router client's routing once fenced (nil for a
// cluster client); armed skips the fence; prev is the armed migration a
// rollback turns around (its moves go on until the rollback is fenced).
//
// It fails only when armed and ctx ends while the switch waits for the
// executions planned by the old topology (advance): the migration is then
// undone, before any key moved, and the client routes by from again as
// before.
func (c *Client) installMigration(ctx context.Context, from Router, fromID, toID string, addrs map[string]string,
	next *topology, armed bool, prev *migState) error {
	m := &migState{from: from, fromID: fromID, toID: toID, addrs: addrs, src: map[string]int{}, moved: newMovedSet(),
		lanes: map[[2]string]*moveLane{}, armed: make(chan struct{}), ended: make(chan struct{}), next: next, prev: prev}
	for _, n := range from.Nodes() {
		m.src[n.Addr] = c.nodes.add(n)
	}
	var waiting *topology
	if next != nil {
		// Waiting: route as the processes that are not fenced yet do.
		waiting = c.topologyOf(from, fromID) // migrate_cluster.go
		m.fromLoc = waiting.loc
		c.switchTo(waiting)
	} else {
		m.fromLoc = c.locatorFor(from)
	}
	old := c.mig.Swap(m)
	if armed {
		if err := c.advance(ctx, m, PhaseArmed); err != nil {
			// Not armed: nothing has moved. Route by the old topology
			// first (m, fenced, routes a command by the topology the
			// client routes by, and moves nothing), then leave m, as
			// AbortMigration does before the fence is armed. The
			// blocking commands planned before go on; a cut the wait
			// may have made is replaced, so that later ones are not
			// taken for cut off.
			if waiting != nil {
				c.switchTo(waiting)
			}
			c.newOutsideCut()
			c.mig.CompareAndSwap(m, old)
			m.end()
			c.settleReads()
			c.settleNodes()
			c.subs.topo.notify() // with m gone, as AbortMigration does
			return err
		}
	}
	m.beacon = c.openBeacons(ctx, m) // reads the marker once before returning
	if old != nil {
		old.beacon.close()
	}
	c.settleNodes() // both sides are in use: a node of either that had left is back (nodes.go)
	return nil
}

// StartMigration begins a live migration of a ring or router client to
// the topology to (a ring, a Router or a Redis Cluster): once the fence is
// armed (see Migration and reshard.Arm; ArmMigration for a process alone)
// the client routes by to and moves each key whose owner changes on first
// use, and the old topology is what keys move away from; until then it
// routes by the old topology and moves nothing.
//
// A cluster (to.Mode ModeCluster) is discovered from to.Seeds before
// StartMigration returns, through the client's own pool options. From
// the fence on, the client is a cluster client for the rest of its life
// (or until it migrates back): it routes by the slot table, follows MOVED
// and ASK, retries TRYAGAIN and CLUSTERDOWN, refreshes the table every
// to.Cluster.RefreshInterval, fans multi-key commands out by slot and
// moves its subscriptions; reads go to replicas per to.Cluster.ReadFrom
// once FinishMigration ended the migration. A client that was built as a
// cluster client needs a new Client built with Config.Migration instead.
//
// to.Migration, when set, gives the move's Addrs and Armed; its From must
// be nil (the old topology is the one the client routes by). Auto-eject
// cannot be on, neither in the client's options nor in to.Health. With Armed,
// the fence's switch happens before StartMigration returns: it waits for
// the commands planned by the old topology (docs/resharding.md, "The wait
// is bounded"), or until ctx ends, when StartMigration fails with an error
// matching ErrMigration and ctx's and no migration is on (nothing moved).
func (c *Client) StartMigration(ctx context.Context, to Config) error {
	return asMigrationErr(c.startMigration(ctx, to))
}

// migrationErr is an error of StartMigration that is not one of
// ErrMigration's own (a bad new config, a refused alias, a closed
// client): its text and its chain are the cause's, and it also matches
// ErrMigration, as StartMigration's errors promise.
type migrationErr struct{ err error }

func (e *migrationErr) Error() string        { return e.err.Error() }
func (e *migrationErr) Unwrap() error        { return e.err }
func (e *migrationErr) Is(target error) bool { return target == ErrMigration }

func asMigrationErr(err error) error {
	if err == nil || errors.Is(err, ErrMigration) {
		return err
	}
	return &migrationErr{err: err}
}

func (c *Client) startMigration(ctx context.Context, to Config) error {
	if c.closed.Load() {
		return ErrClosed
	}
	c.migMu.Lock()
	defer c.migMu.Unlock()
	cur := c.topo.Load()
	if cur == nil {
		return fmt.Errorf("%w: a cluster client cannot change its topology at run time; build a Client with Config.Migration", ErrMigration)
	}
	if c.mig.Load() != nil {
		return fmt.Errorf("%w: a migration is already on; finish or abort it first", ErrMigration)
	}
	if c.health.AutoEject {
		return fmt.Errorf("%w: auto-eject moves keys by itself; turn it off to migrate", ErrMigration)
	}
	if to.Health.AutoEject {
		// The client keeps its own health options: the migration would
		// end with auto-eject off while to asked for it, and it cannot be
		// on during a migration anyway (as Config.Migration says in New).
		return fmt.Errorf("%w: auto-eject moves keys by itself; it cannot be on in the topology a migration goes to", ErrMigration)
	}
	opts, to, err := runTimeMigration(to) // migrate_cluster.go
	if err != nil {
		return err
	}
	tv, err := to.validate()
	if err != nil {
		return err
	}
	if err := sameTopology(cur.id, to); err != nil {
		return errtext.Errorf("%w: %w", ErrMigration, err)
	}
	known, err := configAddrs(to) // config.go
	if err != nil {
		return err
	}
	for _, n := range cur.router.Nodes() {
		known = append(known, n.Addr)
	}
	if err := checkMigrationAddrKeys(opts.Addrs, known); err != nil {
		return err
	}
	if err := tlsDropped(*c.cfg, to, "the new topology"); err != nil {
		return err
	}
	if err := credsDropped(*c.cfg, to, "the new topology"); err != nil {
		return err
	}
	if err := dbDropped(*c.cfg, to, "the new topology"); err != nil {
		return err
	}
	if err := sentinelMigrationErr(*c.cfg, to); err != nil { // migrate_target.go
		return errtext.Errorf("%w: %w", ErrMigration, err)
	}
	var pending *pendingTopology
	if to.Mode == ModeCluster {
		pending, err = c.clusterTopology(ctx, to) // migrate_cluster.go
	} else {
		pending, err = c.topologyFor(to, tv.ring)
	}
	if err != nil {
		return err
	}
	// Checked before the new topology's nodes join the client: a refused
	// migration changes no node's state, and reports none (NodeState).
	if err := c.distinctServers(ctx, cur.router.Nodes(), pending.nodes); err != nil { // migrate_alias.go
		return err
	}
	if c.closed.Load() {
		return ErrClosed
	}
	next := pending.register()
	c.readReplicas.Store(false) // masters alone see the keys that move
	if err := c.installMigration(ctx, cur.router, cur.id, next.id, opts.Addrs, next, opts.Armed, nil); err != nil {
		return err
	}
	c.subs.topo.notify() // subscriptions follow (subscription_registry.go)
	c.renameConns(ctx)   // routing by the old topology until the fence (migrate_name.go)
	return nil
}

// pendingTopology is a new topology before its nodes join the client:
// nodes are the nodes it routes to, register registers them with the
// client (its health checks, Stats and node events) and returns the
// placement.
type pendingTopology struct {
	nodes    []Node
	register func() *topology
}

// topologyFor builds the placement of a ring or router config (a ring on
// built, the ring of cfg its validation built, when not nil); its nodes
// are registered with the client by the result's register.
func (c *Client) topologyFor(cfg Config, built *ring.Ring) (*pendingTopology, error) {
	if cfg.Router != nil {
		g := &guardedRouter{c: c, r: cfg.Router} // a panic is contained (callback.go)
		if err := g.load(); err != nil {
			return nil, err
		}
		id, err := checkedTopologyID(cfg)
		if err != nil {
			return nil, err
		}
		return &pendingTopology{nodes: g.Nodes(), register: func() *topology {
			return &topology{loc: newRouterLocator(g, c.nodes), router: g, id: id}
		}}, nil
	}
	var rr *RingRouter
	if built != nil {
		rr = ringRouterOf(built)
	} else {
		var err error
		if rr, err = NewRingRouter(cfg.RingConfig()); err != nil {
			return nil, errtext.Errorf("%w: %w", ErrBadConfig, err)
		}
	}
	return &pendingTopology{nodes: rr.Nodes(), register: func() *topology {
		idx := make([]int, len(rr.Nodes()))
		for i, n := range rr.Nodes() {
			idx[i] = c.nodes.add(n)
		}
		return &topology{loc: mappedRingLocator{rr: rr, idx: idx}, router: rr, id: TopologyID(cfg)}
	}}, nil
}

// FinishMigration ends a migration once every key has moved (after
// reshard.Move and a clean reshard.Verify): the client keeps routing by
// its topology and stops looking at the old one. Called before the
// fence's switch finished (or before the fence went up), it ends the
// commands still planned by the old topology as the switch would: a
// blocking one whose keys the client now routes elsewhere (a BLPOP at a
// node its queue left) fails with an error matching ErrFenceSwitched, to
// be run again, and one whose keys stay is served where it waits.
func (c *Client) FinishMigration() error {
	c.migMu.Lock()
	defer c.migMu.Unlock()
	m := c.mig.Load()
	if m == nil {
		return fmt.Errorf("%w: no migration is on", ErrMigration)
	}
	// The beacons' loop first: a switch it had begun stops, incomplete
	// (advance), and the phase and m.switched no longer change.
	m.beacon.close()
	switched := m.switched.Load()
	if m.next != nil && m.phase.Load() == int32(PhaseWaiting) {
		c.switchTo(m.next) // never fenced: it still routed by the old topology
	}
	out := c.outCut.Load()
	c.newOutsideCut()
	c.mig.Store(nil)
	m.end()
	if !switched {
		// The client leaves the old topology without the switch having
		// waited for what was planned by it (never fenced, or the
		// switch stopped above): cut that off now, as the switch would
		// have, for the blocking commands whose keys the client now
		// routes elsewhere. Such a command planned by the old topology
		// (or before StartMigration) would otherwise stay blocked for
		// good at a node its key has left, while producers push at the
		// new owner; one whose keys stay is served where it waits. A
		// command not begun yet, or a transaction's next round trip
		// (enterWaiting), fails with ErrFenceSwitched instead of being
		// sent there.
		m.phase.CompareAndSwap(int32(PhaseWaiting), int32(PhaseFenced))
		m.cut.cutMoving(c.leftBehind)
		if m.prev != nil {
			m.prev.activeCut.cutMoving(c.leftBehind) // planned by the topology a rollback leaves
		} else if out != nil {
			out.cutMoving(c.leftBehind)
		}
	}
	c.settleReads()                     // replica reads, if the cluster's config asks for them
	c.settleNodes()                     // the old topology's nodes that the new one lacks retire (nodes.go)
	c.subs.topo.notify()                // keyspace subscriptions leave the old nodes (subscription_place.go)
	c.renameConns(context.Background()) // named after the new topology (migrate_name.go)
	return nil
}

// AbortMigration turns a migration around. Before the fence was armed no
// key has moved: the client routes by the old topology again and the
// migration ends. Once armed, it becomes the reverse migration, behind its
// own fence: the client keeps routing by the new topology and moving keys
// forward (as the other armed processes do) until the reverse fence is
// armed, then routes by the old topology and moves keys back on first use.
// Run the mover in the reverse direction, then FinishMigration. Aborting
// such a rollback before its fence is up goes back to the armed migration
// it turned around (keys moved forward stay where they are); once its
// fence is up and not armed yet, AbortMigration is refused. Only ring
// and router clients (and those that became cluster clients at run time,
// StartMigration) can turn around at run time: a migration from a ring
// into a cluster turns into one from the cluster back to the ring.
func (c *Client) AbortMigration(ctx context.Context) error {
	c.migMu.Lock()
	defer c.migMu.Unlock()
	m := c.mig.Load()
	if m == nil {
		return fmt.Errorf("%w: no migration is on", ErrMigration)
	}
	cur := c.topo.Load()
	if cur == nil {
		return fmt.Errorf("%w: a cluster client cannot change its topology at run time; build a Client with the reverse Config.Migration", ErrMigration)
	}
	if cr, ok := m.from.(*ClusterRouter); ok && cr.opts == nil {
		return fmt.Errorf("%w: a ring client cannot become a cluster client at run time", ErrMigration)
	}
	if m.prev != nil && m.phase.Load() != int32(PhaseArmed) {
		return c.abortRollback(ctx, m)
	}
	back := c.topologyOf(m.from, m.fromID) // migrate_cluster.go
	if m.phase.Load() != int32(PhaseArmed) {
		// The beacons' loop may be arming m: stop it first, then read
		// the phase again (a check before could see m fenced, the loop
		// arm it and commands move keys that the old topology, routed
		// by again, would not find).
		m.beacon.close()
		if m.phase.Load() != int32(PhaseArmed) {
			// No key has moved yet (moves begin only once armed): route
			// by the old topology again, like a process that never
			// migrated. The routing goes back first: while m is still
			// on, fenced or waiting, a command routed by the topology the
			// client routes by moves nothing, where with m gone and the
			// new topology still in place a key would be looked for at
			// its new owner. Commands waiting at m's fence end, not sent.
			c.newOutsideCut()
			c.switchTo(back)
			c.mig.Store(nil)
			m.end()
			c.settleReads()
			c.settleNodes()
			// Told again with m gone: switchTo told the subscriptions
			// while m was still on, and one that placed its names then
			// kept a pattern on the new topology's nodes for good.
			c.subs.topo.notify()
			c.renameConns(ctx)
			return nil
		}
		m.beacon = c.openBeacons(ctx, m) // armed meanwhile: it turns around below
	}
	// Armed: other processes may still move keys forward, so this one
	// does too until the rollback is fenced (it then routes by the old
	// topology) and armed (it moves keys back).
	_ = c.installMigration(ctx, cur.router, cur.id, m.fromID, m.addrs, back, false, m) // not armed: it cannot fail
	c.subs.topo.notify()
	c.renameConns(ctx)
	return nil
}

// abortRollback is AbortMigration of a rollback m that is not armed. No
// key has moved back, but the migration m turns around (m.prev) has moved
// keys forward and other processes may still do so: leaving every
// migration, as for a first migration that never armed, would route by
// the new topology alone while keys not moved yet sit at their old owners
// (a read would miss them, a write start a fresh value). While m waits
// behind its fence the client routes as m.prev does, by its new topology,
// moving keys forward through it; so it simply goes back to m.prev, armed,
// with beacons of its own again. Once m's fence is up (PhaseFenced) the
// client routes by the old topology and other processes may have
// acknowledged it, and a fence never goes back: that is refused.
func (c *Client) abortRollback(ctx context.Context, m *migState) error {
	// The beacons' loop may be advancing m: stop it first (a switch it
	// had begun stops, incomplete), then read the phase.
	m.beacon.close()
	if p := MigrationPhase(m.phase.Load()); p != PhaseWaiting {
		m.beacon = c.openBeacons(ctx, m) // m goes on as it was
		return fmt.Errorf("%w: the rollback's fence is up (phase %s) and cannot be lowered: arm it (shardis reshard in reverse), and then AbortMigration turns the client forward again", ErrMigration, p)
	}
	fwd := m.prev
	c.mig.Store(fwd)
	fwd.beacon = c.openBeacons(ctx, fwd)
	c.subs.topo.notify() // subscriptions follow (subscription_registry.go)
	c.renameConns(ctx)
	return nil
}

// leftBehind reports whether a blocking call, routed to node by a
// topology the client has left, has a key that the client now routes to
// another node (or cannot place).
func (c *Client) leftBehind(cl *call, node int) bool {
	if _, ok := blockFor(cl); !ok || cl.info == nil {
		return false
	}
	pos, err := cl.info.KeyPositions(cl.args, nil)
	if err != nil {
		return false
	}
	for _, p := range pos {
		k, ok := command.Arg(cl.args[p])
		if !ok {
			continue
		}
		if n, _, err := c.loc.locate(k); err != nil || n != node {
			return true
		}
	}
	return false
}

// newOutsideCut gives the blocking commands planned outside a migration
// from now on a fresh cut (bind), before the migration ends, so that the
// next StartMigration's switch cuts them alone.
func (c *Client) newOutsideCut() {
	if c.outCut.Load() != nil {
		c.outCut.Store(new(fenceCut))
	}
}

// MigrationInfo describes the migration a client is in.
type MigrationInfo struct {
	From, To     Router
	FromID, ToID string // TopologyID of each side
	// BusyKeys counts keys found at both owners by this client's moves
	// whose old owner's copy it deleted (see docs/resharding.md); a delete
	// that failed counts among Failures instead, and one that found the
	// old copy gone already is not counted.
	BusyKeys int64
	// Moves counts the client's MIGRATE calls that moved keys (answered
	// OK); one call carries the keys of concurrent callers and of a
	// pipeline together.
	Moves int64
	// Overwrites counts blind overwrites done: the key written at its new
	// owner and the old copy deleted, with no MIGRATE (docs/resharding.md,
	// "Overwrites need no move").
	Overwrites int64
	// OldReads counts reads answered at the key's old owner, where it
	// still was, without moving it.
	OldReads int64
	// Failures counts moves and deletes of old copies that failed; each
	// failed its callers' commands with a *MigrateError.
	Failures int64
	// Phase is where the client is in the migration's fence.
	Phase MigrationPhase
}

// Migration reports the migration the client is in; ok is false when
// there is none.
func (c *Client) Migration() (info MigrationInfo, ok bool) {
	m := c.mig.Load()
	if m == nil {
		return MigrationInfo{}, false
	}
	to := c.currentRouter()
	if m.next != nil {
		to = m.next.router
	}
	return MigrationInfo{From: m.from, To: to, FromID: m.fromID, ToID: m.toID, BusyKeys: m.busy.Load(),
		Moves: m.moves.Load(), Overwrites: m.overwrote.Load(), OldReads: m.oldReads.Load(), Failures: m.failures.Load(),
		Phase: MigrationPhase(m.phase.Load())}, true
}

// validateMigration checks the migration block of a Config.
func (c Config) validateMigration() (fromRing *ring.Ring, _ error) {
	m := c.Migration
	if m == nil {
		return fromRing, nil
	}
	if m.From == nil {
		return nil, fmt.Errorf("%w: migration needs a From topology", ErrBadConfig)
	}
	if m.From.Migration != nil {
		return nil, fmt.Errorf("%w: a migration's From topology cannot migrate itself", ErrBadConfig)
	}
	fv, err := m.From.validate()
	if err != nil {
		return nil, badConfigf("migration from: %w", err)
	}
	fromRing = fv.ring
	fromID, err := checkedTopologyID(*m.From)
	if err != nil {
		return nil, err
	}
	if err := sameTopology(fromID, c); err != nil {
		return nil, err
	}
	if c.Health.AutoEject {
		return nil, fmt.Errorf("%w: auto-eject moves keys by itself; it cannot be on during a migration", ErrBadConfig)
	}
	if c.Cluster.ReadFrom != "" && c.Cluster.ReadFrom != ReadMaster {
		return nil, fmt.Errorf("%w: replica reads cannot see keys being moved; read from masters during a migration", ErrBadConfig)
	}
	if err := sentinelMigrationErr(c, *m.From); err != nil { // migrate_target.go
		return nil, errtext.Errorf("%w: %w", ErrBadConfig, err)
	}
	if err := tlsDropped(c, *m.From, "Migration.From"); err != nil {
		return nil, err
	}
	if err := credsDropped(c, *m.From, "Migration.From"); err != nil {
		return nil, err
	}
	if err := dbDropped(c, *m.From, "Migration.From"); err != nil {
		return nil, err
	}
	return fromRing, nil
}

// sameTopology refuses a migration from the topology named fromID to to
// when both have one TopologyID: the migration could not be told from its
// reverse (the fence's marker and the beacons name both sides by their
// IDs), so a rollback would find its fence armed on the same nodes at
// once, and the mover would take its own connections for those of a
// mover of the opposite migration. Two rings or clusters with one ID
// place every key alike (nothing would move); a Router without
// TopologyIDer is named after its nodes' addresses, which two placements
// over the same nodes share.
func sameTopology(fromID string, to Config) error {
	toID, err := checkedTopologyID(to) // a panic of to's Router is the error
	if err != nil {
		return err
	}
	if toID != fromID {
		return nil
	}
	if to.Router == nil { // a ring's or cluster's ID, which names its placement
		return fmt.Errorf("%w: both topologies of the migration have the TopologyID %s: they place every key alike, so there is nothing to move", ErrBadConfig, fromID)
	}
	return fmt.Errorf("%w: both topologies of the migration have the TopologyID %s, so the migration could not be told from its reverse; a Router that places keys otherwise on the same nodes must name its placement (implement TopologyIDer)", ErrBadConfig, fromID)
}

// credsDropped refuses a topology whose pool options give credentials
// (user, password) other than the client's: both topologies are reached
// with the client's pool options, so they would be ignored, and the
// other topology's nodes logged in to with the client's. The error names
// neither the user nor the password.
func credsDropped(client, other Config, what string) error {
	o, p := other.Pool, client.Pool
	if (o.Username == "" && o.Password == "") || (o.Username == p.Username && o.Password == p.Password) {
		return nil
	}
	return fmt.Errorf("%w: %s gives credentials (user or password) other than the client's, but both topologies are reached with the client's pool options, which would log in to its nodes with the client's own: give both topologies' servers the client's credentials, and give %s none or the same", ErrBadConfig, what, what)
}

// dbDropped refuses a topology whose pool options name a database other
// than the client's: both topologies are reached with the client's pool
// options, so the migration would scan and move the client's database.
func dbDropped(client, other Config, what string) error {
	if other.Pool.DB != 0 && other.Pool.DB != client.Pool.DB {
		return fmt.Errorf("%w: %s names database %d, but both topologies are reached with the client's pool options, which use database %d: give %s none or the same", ErrBadConfig, what, other.Pool.DB, client.Pool.DB, what)
	}
	return nil
}

// tlsDropped refuses a topology whose pool options ask for TLS when the
// client's do not: both topologies are reached with the client's pool
// options, so its connections would go out in plain text.
func tlsDropped(client, other Config, what string) error {
	if other.Pool.TLSConfig != nil && client.Pool.TLSConfig == nil {
		return fmt.Errorf("%w: %s asks for TLS, but both topologies are reached with the client's pool options, which do not: give the client the same TLS settings", ErrBadConfig, what)
	}
	return nil
}

// isBusyKey reports MIGRATE's error for a key that its target already has.
func isBusyKey(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.Contains(string(re), "BUSYKEY")
}
