package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
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

// startNoClusterNodesScanCluster starts a scanCluster without replicas
// whose client logs in as ACL user app, who may run everything but
// CLUSTER NODES (user admin, password admin-pass-0, may run everything),
// and never refreshes its slot map on its own; it checks that the ACL
// refuses the client's CLUSTER NODES.
func startNoClusterNodesScanCluster(ctx context.Context, t *testing.T) scanCluster {
	t.Helper()
	cl := startScanCluster(t, 0, redistest.Options{Users: []redistest.User{
		{Name: "admin", Password: "admin-pass-0"},
		{Name: "app", Password: "app-pass-1", Rules: "~* &* +@all -cluster|nodes"},
	}}, func(cfg *shard.Config) {
		cfg.Pool = pool.Options{Username: "app", Password: "app-pass-1", DialTimeout: 3 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second}
		cfg.Cluster.RefreshInterval = -1
	})
	_, err := cl.c.Do(ctx, "CLUSTER", "NODES")
	require.Error(t, err, "the ACL refuses CLUSTER NODES")
	return cl
}

// fillAndMoving writes 1500 keys fill... over the whole cluster and 60
// keys M<tag>... in tag's slot (the slot a test moves), and returns them
// with the address c routes each of the fill keys to.
func fillAndMoving(ctx context.Context, t *testing.T, c *shard.Client, tag string) (fill, moving []string, ownerOf map[string]string) {
	t.Helper()
	fill = fillKeys(ctx, t, c, "fill", 1500)
	moving = fillKeys(ctx, t, c, "M"+tag, 60)
	return fill, moving, keyOwners(t, c, fill)
}
