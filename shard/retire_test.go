package shard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probeCounter counts, per address, the health checks that reached a
// node (a HealthOptions.Check that PINGs) and the dials the client made
// (Hooks.Dial), successful or not: a probe of a dead node is a failed
// dial.
type probeCounter struct {
	mu      sync.Mutex
	checks  map[string]int
	dials   map[string]int
	retired map[string]int // NodeRetired events
}

func newProbeCounter() *probeCounter {
	return &probeCounter{checks: map[string]int{}, dials: map[string]int{}, retired: map[string]int{}}
}

// hooks counts the dials and the NodeRetired events.
func (p *probeCounter) hooks() *shard.Hooks {
	return &shard.Hooks{Dial: p.dial, NodeState: func(ev shard.NodeEvent) {
		if ev.Kind == shard.NodeRetired {
			p.mu.Lock()
			p.retired[ev.Node.Addr]++
			p.mu.Unlock()
		}
	}}
}

func (p *probeCounter) check(ctx context.Context, conn redis.Conn, n shard.Node) error {
	p.mu.Lock()
	p.checks[n.Addr]++
	p.mu.Unlock()
	return shard.CheckPing(ctx, conn, n)
}

func (p *probeCounter) dial(_ context.Context, ev *shard.DialEvent) {
	p.mu.Lock()
	p.dials[ev.Node.Addr]++
	p.mu.Unlock()
}

func (p *probeCounter) count(m map[string]int, addr string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return m[addr]
}

// waitChecks waits until the node at addr has answered n more health
// checks: n health intervals have passed.
func (p *probeCounter) waitChecks(t *testing.T, addr string, n int) {
	t.Helper()
	start := p.count(p.checks, addr)
	waitFor(t, 20*time.Second, fmt.Sprintf("%d more health checks of %s", n, addr), func() bool {
		return p.count(p.checks, addr) >= start+n
	})
}

// listedUp reports whether Stats lists addr, and not down.
func listedUp(c *shard.Client, addr string) bool {
	ns := nodeStats(c, addr)
	for _, n := range ns {
		if n.Down {
			return false
		}
	}
	return len(ns) > 0
}

// clientsOf returns how many connections the server has, the one asking
// included.
func clientsOf(t *testing.T, s *redistest.Server) int {
	t.Helper()
	info, err := s.Do("INFO", "clients")
	require.NoError(t, err)
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, "connected_clients:"); ok {
			var n int
			_, err := fmt.Sscan(strings.TrimSpace(v), &n)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no connected_clients in INFO clients of %s", s.Addr)
	return 0
}

// assertNoProbes waits for a few health checks of the live node at live
// and asserts that nothing dialed gone meanwhile.
func assertNoProbes(t *testing.T, p *probeCounter, live, gone string) {
	t.Helper()
	p.waitChecks(t, live, 2) // a probe that began before the node retired has ended
	before := p.count(p.dials, gone)
	p.waitChecks(t, live, 5)
	assert.Equal(t, before, p.count(p.dials, gone), "dials to %s over five health intervals", gone)
}

// TestRetiredRingShardAfterMigration migrates a live ring client from
// three shards to two: while the migration is on the third shard stays
// listed and checked; once FinishMigration ended it, Stats no longer
// lists it, its idle connections close, and after its server stopped
// nothing dials it or reports it down. Migrating back to three shards
// lists it again, and it is checked (and up) again.
// assertLeftThenStopped checks a node that has left the client's topology:
// the client's connections to it close; once it is stopped nothing probes
// it (while live is probed) and nothing reports it; Stats lists nodes
// nodes.
func assertLeftThenStopped(t *testing.T, c *shard.Client, p *probeCounter, gone *redistest.Server, live string, nodes int) {
	t.Helper()
	waitFor(t, 10*time.Second, "the client's connections to the node that left to close", func() bool {
		return clientsOf(t, gone) == 1 // the one asking
	})
	require.Equal(t, 1, p.count(p.retired, gone.Addr), "NodeRetired events of the node that left")
	require.NoError(t, gone.Kill())
	assertNoProbes(t, p, live, gone.Addr)
	assert.Empty(t, nodeStats(c, gone.Addr), "nothing reports the stopped node")
	assert.Len(t, c.Stats().Nodes, nodes)
}

func TestRetiredRingShardAfterMigration(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	p := newProbeCounter()
	cfg := ringConfig(servers)
	cfg.Health.Check = p.check
	cfg.Hooks = p.hooks()
	c := newClient(t, cfg)
	live, gone := servers[0], servers[2]
	for i := range 30 {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("retire:%d", i), i)
		require.NoError(t, err)
	}
	p.waitChecks(t, gone.Addr, 2)

	to := ringConfig(servers[:2])
	to.Migration = &shard.Migration{Armed: true}
	require.NoError(t, c.StartMigration(ctx, to))
	// The migration still moves keys out of the third shard: it stays.
	require.True(t, listedUp(c, gone.Addr), "a node the migration moves keys from is listed")
	p.waitChecks(t, gone.Addr, 2)
	for i := range 30 { // a write moves its key first; a read would not
		v, err := redis.Int(c.Do(ctx, "INCRBY", fmt.Sprintf("retire:%d", i), 0))
		require.NoError(t, err)
		require.Equal(t, i, v)
	}
	n, err := gone.Do("DBSIZE")
	require.NoError(t, err)
	require.Equal(t, "0", n, "every key moved off the third shard")
	require.NoError(t, c.FinishMigration())

	assert.Empty(t, nodeStats(c, gone.Addr), "the shard that left is not in Stats")
	assertLeftThenStopped(t, c, p, gone, live.Addr, 2)

	// The same address joins again.
	require.NoError(t, gone.Restart())
	back := ringConfig(servers)
	back.Migration = &shard.Migration{Armed: true}
	require.NoError(t, c.StartMigration(ctx, back))
	require.NotEmpty(t, nodeStats(c, gone.Addr), "a node that joins again is listed at once")
	require.NoError(t, c.FinishMigration())
	p.waitChecks(t, gone.Addr, 2)
	waitFor(t, 10*time.Second, "the shard that joined again to be up", func() bool { return listedUp(c, gone.Addr) })
	assert.Len(t, c.Stats().Nodes, 3)
}

// joinCluster adds the cluster-enabled server n to the cluster of
// masters and moves the empty slot from owner to it.
func joinCluster(t *testing.T, n *redistest.Server, masters []*redistest.Server, owner *redistest.Server, slot int) {
	t.Helper()
	host, port, ok := strings.Cut(masters[0].Addr, ":")
	require.True(t, ok)
	_, err := n.Do("CLUSTER", "MEET", host, port)
	require.NoError(t, err)
	id := nodeID(t, n)
	all := append([]*redistest.Server{n}, masters...)
	waitFor(t, 20*time.Second, "every node to know "+n.Addr, func() bool {
		for _, m := range all {
			nodes, err := m.Do("CLUSTER", "NODES")
			if err != nil || strings.Count(nodes, "\n")+1 < len(all) || strings.Contains(nodes, "handshake") ||
				!strings.Contains(nodes, id) {
				return false
			}
		}
		return true
	})
	moveSlot(t, slot, owner, n, all)
}

// leaveCluster moves the slot of n back to owner; with forget, every
// master then forgets n, as redis-cli --cluster del-node does.
func leaveCluster(t *testing.T, n *redistest.Server, masters []*redistest.Server, owner *redistest.Server, slot int, forget bool) {
	t.Helper()
	moveSlot(t, slot, n, owner, masters)
	if forget {
		forgetNode(t, nodeID(t, n), masters)
	}
}

// failNodeTimeout is the cluster-node-timeout of a cluster that is to
// flag a killed node fail: a second, so that the flag comes in about 2 s
// rather than the 7 s of the default 5 s. failReplica raises it to
// settledNodeTimeout once the node is flagged.
const failNodeTimeout = time.Second

// settledNodeTimeout is the cluster-node-timeout that a failed-node test
// runs its checks under (the default): masters it stalls for a second or
// two stay well within it, so nothing fails over.
const settledNodeTimeout = 5 * time.Second

// failedNodeCluster skips the test in -short mode, else starts a cluster
// of 3 masters with a replica each and returns it with its clusterConfig,
// periodic refreshes off: the test adjusts the config, creates its client
// and fails a replica (failReplica); only the refreshes it asks for show
// the client the failed node.
func failedNodeCluster(t *testing.T) (*redistest.Cluster, shard.Config) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts its own cluster and waits for a node to be flagged fail")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: failNodeTimeout})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	return rc, cfg
}

// failReplica kills the first replica of rc, a cluster of 3 masters with
// one replica each started by failedNodeCluster, waits until the cluster
// flags it fail and gives the other nodes settledNodeTimeout. It returns
// the killed replica and the masters.
func failReplica(t *testing.T, rc *redistest.Cluster) (victim *redistest.Server, masters []*redistest.Server) {
	t.Helper()
	reps := rc.Replicas()
	require.Len(t, reps, 3)
	masters = rc.Masters()
	require.Len(t, masters, 3)
	victim = reps[0]
	killUntilFlagged(t, victim, masters)
	settleNodeTimeout(t, rc, victim)
	return victim, masters
}

// killUntilFlagged kills victim and waits until masters[0] flags it fail.
// It returns victim's node ID.
func killUntilFlagged(t *testing.T, victim *redistest.Server, masters []*redistest.Server) string {
	t.Helper()
	id := nodeID(t, victim)
	require.NoError(t, victim.Kill())
	waitFor(t, 30*time.Second, "the cluster to flag the node fail", func() bool {
		nodes, err := masters[0].Do("CLUSTER", "NODES")
		return err == nil && flagged(nodes, id, "fail")
	})
	return id
}

// settleNodeTimeout sets the cluster-node-timeout of every node of rc but
// killed to settledNodeTimeout.
func settleNodeTimeout(t *testing.T, rc *redistest.Cluster, killed *redistest.Server) {
	t.Helper()
	for _, s := range rc.Nodes {
		if s == killed {
			continue
		}
		_, err := s.Do("CONFIG", "SET", "cluster-node-timeout", fmt.Sprint(settledNodeTimeout.Milliseconds()))
		require.NoError(t, err, "CONFIG SET cluster-node-timeout on %s", s.Addr)
	}
}

// flagged reports whether the CLUSTER NODES text lists node id with flag.
func flagged(nodes, id, flag string) bool {
	for line := range strings.Lines(nodes) {
		if f := strings.Fields(line); len(f) > 2 && f[0] == id {
			return slices.Contains(strings.Split(f[2], ","), flag)
		}
	}
	return false
}

func forgetNode(t *testing.T, id string, masters []*redistest.Server) {
	t.Helper()
	for _, m := range masters {
		_, err := m.Do("CLUSTER", "FORGET", id)
		require.NoError(t, err, "CLUSTER FORGET on %s", m.Addr)
	}
}

// TestRetiredClusterMaster scales a cluster out by one master and in
// again under a live client, twice. First the master's slot moves away
// and the others forget it: the client's refresh leaves it out of Stats
// and closes its connections, and once its server stopped nothing dials
// it or reports it down. When the same address joins again (a new node
// there, given a slot), the client lists it and checks it again. Then it
// is stopped before the cluster forgets it: while the cluster still lists
// it (failed) the client reports it down, and once forgotten it is gone
// from Stats and no longer dialed.
func TestRetiredClusterMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and a fourth master")
	}
	ctx := context.Background()
	// A node timeout of a second: a stopped node is flagged fail soon.
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{NodeTimeout: time.Second})
	// An emptied master stays a master (by default it would become a
	// replica of the slot's new owner, and count its link among clients).
	extra := redistest.StartTB(t, redistest.Options{Cluster: true, NodeTimeout: time.Second,
		Args: []string{"--cluster-allow-replica-migration", "no"}})
	masters := rc.Masters()
	require.Len(t, masters, 3)
	key := "{retire-cluster}"
	slot := cluster.Slot(key)
	owner, err := rc.MasterOfSlot(slot)
	require.NoError(t, err)
	joinCluster(t, extra, masters, owner, slot)

	p := newProbeCounter()
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Health = shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 3, Timeout: time.Second, Check: p.check}
	cfg.Cluster.RefreshInterval = 200 * time.Millisecond
	cfg.Hooks = p.hooks()
	c := newClient(t, cfg)
	served := func() {
		t.Helper()
		_, err := c.Do(ctx, "SET", key, 1)
		require.NoError(t, err)
		node, err := c.Router().Route(key)
		require.NoError(t, err)
		require.Equal(t, extra.Addr, node.Addr, "the fourth master serves the slot")
		_, err = c.Do(ctx, "DEL", key) // the slot must be empty to move
		require.NoError(t, err)
	}
	served()
	require.True(t, listedUp(c, extra.Addr))
	p.waitChecks(t, extra.Addr, 2)

	// Scale in: the slot goes back, the cluster forgets the master, which
	// then stops.
	leaveCluster(t, extra, masters, owner, slot, true)
	waitFor(t, 20*time.Second, "the master that left to leave Stats", func() bool {
		return len(nodeStats(c, extra.Addr)) == 0
	})
	assertLeftThenStopped(t, c, p, extra, owner.Addr, 3)

	// A new node at the same address joins and takes the slot again.
	require.NoError(t, extra.Restart())
	_, err = extra.Do("CLUSTER", "RESET", "HARD") // a new node ID: the others banned the old one
	require.NoError(t, err)
	joinCluster(t, extra, masters, owner, slot)
	waitFor(t, 20*time.Second, "the master that joined again to be listed and up", func() bool {
		return listedUp(c, extra.Addr)
	})
	p.waitChecks(t, extra.Addr, 2)
	served()
	assert.Len(t, c.Stats().Nodes, 4)

	// Scale in again, the master stopped before the cluster forgets it: a
	// failed node of the cluster is reported down until it is forgotten.
	leaveCluster(t, extra, masters, owner, slot, false)
	id := nodeID(t, extra)
	require.NoError(t, extra.Kill())
	waitFor(t, 20*time.Second, "the stopped master to be reported down", func() bool {
		ns := nodeStats(c, extra.Addr)
		return len(ns) == 1 && ns[0].Down
	})
	// Flagged fail, it leaves the client's slot table (a master without
	// slots that failed is left out), but the cluster still lists it.
	waitFor(t, 20*time.Second, "the masters to flag the stopped master failed", func() bool {
		for _, m := range masters {
			nodes, err := m.Do("CLUSTER", "NODES")
			if err != nil || !flagged(nodes, id, "fail") {
				return false
			}
		}
		return true
	})
	waitFor(t, 20*time.Second, "the slot table to leave out the failed master", func() bool {
		for _, n := range c.Router().(*shard.ClusterRouter).AllNodes() {
			if n.Addr == extra.Addr {
				return false
			}
		}
		return true
	})
	refreshes := c.Stats().Refreshes
	waitFor(t, 20*time.Second, "two more refreshes", func() bool { return c.Stats().Refreshes >= refreshes+2 })
	ns := nodeStats(c, extra.Addr)
	require.Len(t, ns, 1, "a failed master the cluster still lists is reported")
	assert.True(t, ns[0].Down)
	forgetNode(t, id, masters)
	waitFor(t, 20*time.Second, "the forgotten master to leave Stats", func() bool {
		return len(nodeStats(c, extra.Addr)) == 0
	})
	assertNoProbes(t, p, owner.Addr, extra.Addr)
	assert.Len(t, c.Stats().Nodes, 3)
}
