package shard

import (
	"context"
	"fmt"
	"sync"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
)

// A ring or router client can migrate into a Redis Cluster at run time
// (StartMigration with a cluster Config), and back (AbortMigration once
// armed, or a later StartMigration with a ring). Its cluster state is then
// published when its routing switches to the cluster, at the fence
// (advance), and withdrawn when its routing switches back to a ring:
//
//   - c.clus is the cluster the client routes by, nil for a ring. Every
//     cluster-mode path (retries and redirects, refreshes, replica reads,
//     subscriptions, ForEachNode, Tx) loads it, once per command on the
//     command path (execute), and copes with nil.
//   - c.copts holds the cluster's options; it is stored before c.clus and
//     never goes back to nil, so a retry that began under the cluster can
//     finish after a switch back to a ring.
//   - The refresh loop starts once, with the first cluster, and stops at
//     Close; it refreshes whichever cluster is published.
//   - Subscriptions of a client born as a ring watch the client's topology
//     switches; while a cluster is published, its slot-table changes are
//     passed on to them.

// cl returns the cluster the client routes by, or nil.
func (c *Client) cl() *ClusterRouter { return c.clus.Load() }

// defaultClusterOptions serves a ring client's cluster paths before any
// cluster was published (they do not run then).
var defaultClusterOptions = ClusterOptions{}.withDefaults()

// clusterOpts returns the options of the cluster the client routes by, or
// routed by last.
func (c *Client) clusterOpts() *ClusterOptions {
	if o := c.copts.Load(); o != nil {
		return o
	}
	return &defaultClusterOptions
}

// clusterSwitch serialises the switches of a client's routing.
type clusterSwitch struct {
	mu      sync.Mutex
	unchain func() // stops passing the published cluster's changes on
}

// switchTo makes t the routing of a ring or router client: when t is a
// cluster, the client becomes a cluster client (published before t, so a
// command planned by t finds it); when it is a ring, the client stops
// being one. Subscriptions follow.
func (c *Client) switchTo(t *topology) {
	c.carryEjections(t)
	c.switching.mu.Lock()
	if t.cl != nil {
		c.publishCluster(t.cl)
		c.topo.Store(t)
	} else {
		c.topo.Store(t)
		c.withdrawCluster()
	}
	c.switching.mu.Unlock()
	c.nameNodes() // a node is named as the topology it is routed by now names it (nodes.go)
	c.subs.topo.notify()
	if t.cl != nil {
		c.refresh(c.life, false) // its table may have aged since discovery
	}
}

// carryEjections gives t's ring router, before the client routes by it,
// the ejections of the ring router it routes by now for the shards both
// have (RingRouter.succeed): a shard ejected by hand stays out of the
// ring across a migration's switch, end or abort, and one restored by
// hand stays in, even when the Eject or Restore was made on the router
// being replaced while the switch ran. The subscriptions then follow that router's
// ejections and restores. The only failure, a ring that cannot be built
// without shards rr already validated, leaves t's router as it was.
func (c *Client) carryEjections(t *topology) {
	cur := c.topo.Load()
	if cur == nil {
		return
	}
	next, ok := t.router.(*RingRouter)
	if !ok {
		return
	}
	if prev, ok := cur.router.(*RingRouter); ok {
		_ = next.succeed(prev)
	}
	if next != c.ring {
		// The subscriptions watch the ring router the client was built
		// with (subscribeNew): told of this one's ejections and restores
		// too, they re-place their names when the operator ejects a
		// shard of the topology a migration brought in.
		next.told.Do(func() { next.watch.add(c.subs.topo.notify) })
	}
}

// publishCluster makes r the cluster the client routes by. The caller
// holds c.switching.mu.
func (c *Client) publishCluster(r *ClusterRouter) {
	if c.clus.Load() == r {
		return
	}
	c.copts.Store(r.opts)
	if c.switching.unchain != nil {
		c.switching.unchain()
	}
	c.switching.unchain = r.watch.add(c.subs.topo.notify)
	c.clus.Store(r)
	c.startRefreshLoop()
}

// withdrawCluster makes the client a ring or router client again. The
// caller holds c.switching.mu.
func (c *Client) withdrawCluster() {
	if c.clus.Load() == nil {
		return
	}
	c.clus.Store(nil)
	c.readReplicas.Store(false)
	if c.switching.unchain != nil {
		c.switching.unchain()
		c.switching.unchain = nil
	}
}

// startRefreshLoop starts the periodic topology refresh once (unless the
// client is closing); Close stops it.
func (c *Client) startRefreshLoop() {
	if c.clusterOpts().RefreshInterval <= 0 || c.refreshing.Swap(true) {
		return
	}
	if !c.goTracked(&c.bg, c.refreshLoop) {
		c.refreshing.Store(false)
	}
}

// clusterTopology discovers the cluster of cfg through the client's pools
// (credentials and TLS are the client's) for a migration into it; its
// masters are registered with the client by the result's register.
func (c *Client) clusterTopology(ctx context.Context, cfg Config) (*pendingTopology, error) {
	if c.cfg.Pool.DB != 0 {
		return nil, fmt.Errorf("%w: a cluster has database 0 only; this client uses database %d", ErrMigration, c.cfg.Pool.DB)
	}
	if c.sent != nil {
		return nil, fmt.Errorf("%w: a ring of Sentinel shards cannot move into a cluster at run time; migrate to a ring of plain shards first", ErrMigration)
	}
	t, err := c.discoverFunc()(ctx, cfg.Seeds, c.topologyDialer)
	if err != nil {
		return nil, errtext.Errorf("%w: discovering the cluster %v: %w", ErrMigration, cfg.Seeds, err)
	}
	var masters []Node // what the router's Nodes will list
	for _, n := range t.Nodes() {
		if n.Role == cluster.RoleMaster {
			masters = append(masters, Node{Name: n.Addr, Addr: n.Addr})
		}
	}
	return &pendingTopology{nodes: masters, register: func() *topology {
		opts := cfg.Cluster.withDefaults()
		r := newClusterRouter(c.nodes, cfg.Seeds)
		r.opts = &opts
		r.install(t)
		return &topology{loc: clusterLocator{r}, router: r, id: TopologyID(cfg), cl: r}
	}}, nil
}

// topologyOf returns the placement of a migration's router: a cluster
// this client routes by (or routed by) is routed by slot, with everything
// cluster mode does; any other router by its nodes.
func (c *Client) topologyOf(r Router, id string) *topology {
	if cr, ok := r.(*ClusterRouter); ok && cr.opts != nil {
		return &topology{loc: clusterLocator{cr}, router: cr, id: id, cl: cr}
	}
	return &topology{loc: c.locatorFor(r), router: r, id: id}
}

// settleReads turns replica reads on or off once no migration is on:
// on when the client routes by a cluster whose config reads from replicas
// (a migration reads from masters, which alone see the keys it moves).
func (c *Client) settleReads() {
	on := false
	if r := c.cl(); r != nil && r.opts != nil && c.mig.Load() == nil {
		on = r.opts.ReadFrom != ReadMaster
	}
	c.readReplicas.Store(on)
}

// clusterRules returns the cluster whose retry and redirect rules apply
// to a batch that was routed by the old topology of m (PhaseWaiting):
// that topology when it is a cluster the client routes by (a client born
// as one, or one turning back from a cluster); none when it is a ring (a
// ring's shards answer no MOVED, and a retry routed by slot would leave
// the old topology).
func (m *migState) clusterRules() *ClusterRouter {
	if cr, ok := m.from.(*ClusterRouter); ok {
		return cr
	}
	return nil
}

// publishNext makes the cluster a migration moves to the client's, just
// before the migration's phase leaves PhaseWaiting: a command that sees
// the new phase finds the cluster's rules (execute). Commands still
// counted as routed by the old topology ignore it (clusterRules).
func (c *Client) publishNext(m *migState) {
	if m.next == nil || m.next.cl == nil {
		return
	}
	c.switching.mu.Lock()
	c.publishCluster(m.next.cl)
	c.switching.mu.Unlock()
	// Its table was read when the migration started and may have aged
	// while it waited (a failover or a slot moved in the cluster since):
	// read it again before any key moves there, so that no MIGRATE goes
	// to a node that no longer serves the key's slot. On failure the
	// table stays; MOVED replies and later refreshes correct it.
	c.refr.count.Add(1)
	_ = c.observeRefresh(c.life, c.discover)
}

// migrateCalls returns the MIGRATE ... KEYS calls that move a round's
// keys: one, or, when the old topology is a cluster, one per slot (a
// cluster node refuses keys of several slots in one MIGRATE: CROSSSLOT).
// The calls of one node go out as one pipeline.
func (c *Client) migrateCalls(m *migState, p *movePair) []*call {
	one := func(keys []string) *call {
		args, err := c.migrateArgs(m, p.dst, keys)
		return &call{name: "MIGRATE", args: args, err: err, node: p.srcIdx}
	}
	if _, ok := m.from.(*ClusterRouter); !ok || len(p.keys) < 2 {
		return []*call{one(p.keys)}
	}
	bySlot := map[int][]string{}
	var order []int
	for _, k := range p.keys {
		s := cluster.Slot(k)
		if _, ok := bySlot[s]; !ok {
			order = append(order, s)
		}
		bySlot[s] = append(bySlot[s], k)
	}
	calls := make([]*call, len(order))
	for i, s := range order {
		calls[i] = one(bySlot[s])
	}
	return calls
}

// firstCallErr returns the first error of calls: a BUSYKEY one first
// (the caller settles those key by key, which also covers the others).
func firstCallErr(calls []*call) error {
	var first error
	for _, cl := range calls {
		if isBusyKey(cl.err) {
			return cl.err
		}
		if first == nil {
			first = cl.err
		}
	}
	return first
}

// runTimeMigration takes StartMigration's options out of to.Migration
// (Addrs, Armed), which names no From: the old topology is the client's.
func runTimeMigration(to Config) (Migration, Config, error) {
	if to.Migration == nil {
		return Migration{}, to, nil
	}
	m := *to.Migration
	if m.From != nil {
		return Migration{}, to, fmt.Errorf("%w: StartMigration moves away from the topology the client routes by; to.Migration.From must be nil", ErrMigration)
	}
	if err := checkMigrationAddrs(m.Addrs); err != nil { // config.go
		return Migration{}, to, err
	}
	to.Migration = nil
	return m, to, nil
}
