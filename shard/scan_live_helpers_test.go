package shard_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// scanCluster is a cluster of three masters of a test's own, for the
// tests of a Scan that walks while the cluster changes, and a client of
// it.
type scanCluster struct {
	rc     *redistest.Cluster
	c      *shard.Client
	ms     []shard.Node                 // the client's masters, in its order
	byAddr map[string]*redistest.Server // the masters by address
	ids    map[string]string            // the masters' node IDs by address
}

// startScanCluster starts a cluster of three masters with replicas
// replicas each, started with o, and a client of it with the config
// tweak adjusts; it checks that the client lists three masters.
func startScanCluster(t *testing.T, replicas int, o redistest.Options, tweak func(*shard.Config)) scanCluster {
	t.Helper()
	rc := redistest.StartClusterTB(t, 3, replicas, o)
	cfg := clusterConfig(rc.Seeds()...)
	tweak(&cfg)
	c := newClient(t, cfg)
	ms := c.Nodes()
	require.Len(t, ms, 3)
	byAddr := map[string]*redistest.Server{}
	ids := map[string]string{}
	for _, s := range rc.Masters() {
		byAddr[s.Addr] = s
		ids[s.Addr] = nodeID(t, s)
	}
	return scanCluster{rc: rc, c: c, ms: ms, byAddr: byAddr, ids: ids}
}

// keyOwners returns the address c routes each of keys to, by key.
func keyOwners(t *testing.T, c *shard.Client, keys []string) map[string]string {
	t.Helper()
	to := make(map[string]string, len(keys))
	for _, k := range keys {
		n, err := c.Router().Route(k)
		require.NoError(t, err)
		to[k] = n.Addr
	}
	return to
}
