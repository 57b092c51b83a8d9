package shard_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// tableAddrs returns the addresses of the client's slot table, sorted.
func tableAddrs(t *testing.T, c *shard.Client) []string {
	t.Helper()
	r, ok := c.Router().(*shard.ClusterRouter)
	require.True(t, ok, "a cluster client routes by a *ClusterRouter")
	var out []string
	for _, n := range r.Table().Nodes() {
		out = append(out, n.Addr)
	}
	slices.Sort(out)
	return out
}

// reusedAddrSetup starts a three-master cluster with a replica each and
// a client of it with the given seeds (nil: every node), then gives the
// address of the replica a refresh asks first after the masters to
// another cluster: that replica forgets its cluster (CLUSTER RESET HARD,
// a new node ID) and serves every slot on its own. It returns the
// client, the table's nodes (masters first) as the client had them, the
// servers by address and the reused one. hooks, when not nil, are the
// client's.
func reusedAddrSetup(t *testing.T, seeds func(rc *redistest.Cluster) []string, hooks *shard.Hooks) (*shard.Client, []cluster.NodeInfo, map[string]*redistest.Server, *redistest.Server) {
	t.Helper()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Minute})
	cfg := clusterConfig(seeds(rc)...)
	cfg.Pool = pool.Options{DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: time.Second}
	cfg.Health.Interval = -1 // nothing marks the paused nodes down
	cfg.Cluster.RefreshInterval = -1
	cfg.Hooks = hooks
	c := newClient(t, cfg)
	nodes := c.Router().(*shard.ClusterRouter).Table().Nodes()
	require.Len(t, nodes, 6)
	require.Equal(t, cluster.RoleReplica, nodes[3].Role)
	byAddr := map[string]*redistest.Server{}
	for _, s := range rc.Nodes {
		byAddr[s.Addr] = s
	}
	reused := byAddr[nodes[3].Addr]
	require.NotNil(t, reused)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := reused.DoContext(ctx, "CLUSTER", "RESET", "HARD")
	require.NoError(t, err)
	// Alone in its cluster, the node turns its state ok only after its
	// rejoin delay, its node timeout capped to 5 s: half a second will do
	// (it knows no other node to time out).
	_, err = reused.DoContext(ctx, "CONFIG", "SET", "cluster-node-timeout", "500")
	require.NoError(t, err)
	_, err = reused.DoContext(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
	require.NoError(t, err)
	waitFor(t, 20*time.Second, "the reused address serves its own cluster", func() bool {
		info, err := reused.DoContext(ctx, "CLUSTER", "INFO")
		return err == nil && strings.Contains(info, "cluster_state:ok")
	})
	// The cluster's nodes drop the address from the reset node's old
	// entry once they meet its new ID there (their next PING to it); until
	// then a replica's answer still lists the address as its cluster's,
	// and a test that pauses the masters at once reads that.
	for _, s := range rc.Nodes {
		if s == reused {
			continue
		}
		waitFor(t, 20*time.Second, s.Addr+" no longer lists the reused address", func() bool {
			list, err := s.DoContext(ctx, "CLUSTER", "NODES")
			return err == nil && !strings.Contains(list, " "+reused.Addr+"@")
		})
	}
	return c, nodes, byAddr, reused
}

// pause stops the servers of nodes until the end of the test: they
// accept connections and never answer.
func pause(t *testing.T, byAddr map[string]*redistest.Server, nodes []cluster.NodeInfo) {
	t.Helper()
	for _, n := range nodes {
		s := byAddr[n.Addr]
		require.NotNil(t, s, n.Addr)
		pauseUntilCleanup(t, s)
	}
}

// TestReview8RefreshRejectsAnotherClustersAnswer: a node's address is
// reused by a node of another cluster. When the masters are slow to
// answer, the refresh's hedge asks that address, which answered at once
// with its own one-node cluster, and the client installed it: every key
// went to a server of another cluster. An answer that shares no node
// with the cluster the client knows is not taken while a node of that
// cluster answers; when none does, it is taken from a seed (the cluster
// may have been replaced as a whole). (The cluster's own answer listed
// the lost replica without an address, which made every node's reply
// malformed: no refresh could succeed.)
func TestReview8RefreshRejectsAnotherClustersAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster with replicas")
	}
	var (
		mu     sync.Mutex
		events []shard.RefreshEvent
	)
	hooks := &shard.Hooks{Refresh: func(_ context.Context, ev *shard.RefreshEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, *ev)
	}}
	c, nodes, byAddr, reused := reusedAddrSetup(t, (*redistest.Cluster).Seeds, hooks)
	require.Zero(t, c.Stats().OtherCluster)
	var before []string
	for _, n := range nodes {
		before = append(before, n.Addr)
	}
	slices.Sort(before)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	pause(t, byAddr, nodes[:3])
	require.NoError(t, c.Refresh(ctx), "the other replicas answer")
	// The cluster lists the replica it lost without an address (noaddr):
	// it is left out, and the rest of the reply is used.
	want := slices.DeleteFunc(slices.Clone(before), func(a string) bool { return a == reused.Addr })
	require.Equal(t, want, tableAddrs(t, c),
		"the table is the cluster's, not the one-node cluster now at %s", reused.Addr)
	// The refused answer is reported, though the refresh succeeded: the
	// operator learns that an address of the cluster serves another one.
	require.Positive(t, c.Stats().OtherCluster, "the answer of another cluster is counted")
	mu.Lock()
	require.NotEmpty(t, events)
	last := events[len(events)-1]
	mu.Unlock()
	require.NoError(t, last.Err)
	require.Positive(t, last.OtherCluster, "the Refresh hook hears of the answer refused")

	// No node of the cluster answers: the other cluster's answer, from
	// an address that is a seed, is taken.
	pause(t, byAddr, nodes[4:])
	require.NoError(t, c.Refresh(ctx))
	require.Equal(t, []string{reused.Addr}, tableAddrs(t, c))
}

// TestReview8RefreshKeepsTableWhenOnlyAnotherClusterAnswers: the seeds
// are the masters; the reused address is known only from the table.
// With every node of the cluster hung, the other cluster's answer is the
// only one: the refresh fails with cluster.ErrOtherCluster, naming that
// node, and the table stays.
func TestReview8RefreshKeepsTableWhenOnlyAnotherClusterAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster with replicas")
	}
	c, nodes, byAddr, reused := reusedAddrSetup(t, func(rc *redistest.Cluster) []string {
		var out []string
		for _, m := range rc.Masters() {
			out = append(out, m.Addr)
		}
		return out
	}, nil)
	before := tableAddrs(t, c)
	pause(t, byAddr, nodes[:3])
	pause(t, byAddr, nodes[4:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := c.Refresh(ctx)
	require.ErrorIs(t, err, cluster.ErrOtherCluster)
	require.ErrorContains(t, err, "seed "+reused.Addr+": ")
	require.Equal(t, before, tableAddrs(t, c))
}
