package shard_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestRenamedNodesRetireWhenTheNodeListIsUnknown: the cluster switches
// from IP endpoints to hostname endpoints, and the refresh that installs
// the table naming every node by hostname gets no answer to CLUSTER NODES
// (every master is paused right then). The table's node IDs already say
// that the old names are the same servers, not failed nodes: they retire
// with that refresh, instead of staying health-checked and listed in
// Stats (each server twice) until a later refresh gets the list.
func TestRenamedNodesRetireWhenTheNodeListIsUnknown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	cfg.Pool.ReadTimeout = 300 * time.Millisecond
	c := newClient(t, cfg)
	for _, s := range rc.Nodes {
		require.False(t, strings.HasPrefix(s.Addr, "localhost:"))
		require.NotEmpty(t, nodeStats(c, s.Addr), "the first table names %s by IP", s.Addr)
	}

	var paused atomic.Int32
	var pauseErr atomic.Value
	shard.BeforeKeepFailed(func(hc *shard.Client) {
		if hc != c || !byHostname(c) || !paused.CompareAndSwap(0, 1) {
			return
		}
		// Longer than the client's read timeout: no master answers
		// CLUSTER NODES.
		for _, s := range rc.Nodes {
			if _, err := s.Do("CLIENT", "PAUSE", "1500", "ALL"); err != nil {
				pauseErr.Store(err)
			}
		}
	})
	t.Cleanup(func() { shard.BeforeKeepFailed(nil) })

	for _, s := range rc.Nodes {
		_, err := s.Do("CONFIG", "SET", "cluster-announce-hostname", "localhost")
		require.NoError(t, err)
	}
	for _, s := range rc.Nodes {
		_, err := s.Do("CONFIG", "SET", "cluster-preferred-endpoint-type", "hostname")
		require.NoError(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Until a node's hostname reached every node by gossip, a table may
	// name some nodes by IP still: the pause is for the first refresh
	// that installs a table naming every node by hostname.
	for paused.Load() == 0 {
		require.NoError(t, c.Refresh(ctx))
		require.NoError(t, ctx.Err(), "no refresh installed the table named by hostname")
	}
	require.Nil(t, pauseErr.Load())
	for _, s := range rc.Nodes {
		require.Empty(t, nodeStats(c, s.Addr), "%s, now named by hostname in the table, is still kept by its IP", s.Addr)
	}
	require.Len(t, c.Stats().Nodes, len(rc.Nodes))
}

// byHostname reports whether the table c routes by names every node by
// hostname.
func byHostname(c *shard.Client) bool {
	nodes := c.Router().(*shard.ClusterRouter).Table().Nodes()
	for _, n := range nodes {
		if !strings.HasPrefix(n.Addr, "localhost:") {
			return false
		}
	}
	return len(nodes) > 0
}
