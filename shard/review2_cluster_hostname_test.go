package shard_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// In a cluster whose nodes are reached by hostname
// (cluster-preferred-endpoint-type hostname), a replica that fails leaves
// the slot table but is still part of the cluster: the client keeps it,
// health-checked and reported down, until the cluster forgets it, as it
// does for nodes reached by IP. CLUSTER NODES shows IPs only (with the
// hostname after a comma), and the client used to match the failed
// node's hostname address against the IPs alone, so it retired the node
// at once.
func TestReview2ClusterFailedNodeByHostnameIsKept(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second, Args: []string{
		"--cluster-announce-hostname", "localhost",
		"--cluster-preferred-endpoint-type", "hostname",
	}})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Health = shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 3, Timeout: time.Second}
	cfg.Cluster.RefreshInterval = 200 * time.Millisecond
	c := newClient(t, cfg)

	replicas := rc.Replicas()
	require.NotEmpty(t, replicas)
	victim := replicas[0]
	_, port, err := net.SplitHostPort(victim.Addr)
	require.NoError(t, err)
	addr := net.JoinHostPort("localhost", port)
	inTable := func() bool {
		for _, n := range c.Router().(*shard.ClusterRouter).AllNodes() {
			if n.Addr == addr {
				return true
			}
		}
		return false
	}
	require.True(t, inTable(), "the client reaches the nodes by hostname: %v", c.Router().(*shard.ClusterRouter).AllNodes())
	_, err = c.Do(ctx, "SET", "{review2host}", "1")
	require.NoError(t, err)

	id := nodeID(t, victim)
	require.NoError(t, victim.Kill())
	waitFor(t, 20*time.Second, "the masters to flag the stopped replica failed", func() bool {
		for _, m := range rc.Masters() {
			nodes, err := m.Do("CLUSTER", "NODES")
			if err != nil || !flagged(nodes, id, "fail") {
				return false
			}
		}
		return true
	})
	waitFor(t, 20*time.Second, "the slot table to leave out the failed replica", func() bool { return !inTable() })
	refreshes := c.Stats().Refreshes
	waitFor(t, 20*time.Second, "two more refreshes", func() bool { return c.Stats().Refreshes >= refreshes+2 })
	ns := nodeStats(c, addr)
	require.NotEmpty(t, ns, "a failed replica the cluster still lists is reported")
	for _, n := range ns {
		assert.True(t, n.Down, "%s is down", n.Node)
	}
}
