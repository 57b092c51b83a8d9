package shard_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview11RefreshEventOtherClusterIsItsOwn: RefreshEvent.OtherCluster
// and RefreshEvent.SwitchedCluster say what one refresh met. They were
// read as the change of the client's counters from the refresh's start
// to its end, so a Client.Refresh that met only its own cluster, while
// another refresh (a background one, or another caller's) ran meanwhile,
// refused an answer of another cluster and switched to it, reported that
// it had itself refused one and switched the client to another cluster.
func TestReview11RefreshEventOtherClusterIsItsOwn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster with replicas")
	}
	type mark struct{}
	var (
		mu              sync.Mutex
		mine, meanwhile []shard.RefreshEvent
	)
	hooks := &shard.Hooks{Refresh: func(ctx context.Context, ev *shard.RefreshEvent) {
		mu.Lock()
		defer mu.Unlock()
		switch ctx.Value(mark{}) {
		case "mine":
			mine = append(mine, *ev)
		case "meanwhile":
			meanwhile = append(meanwhile, *ev)
		}
	}}
	c, nodes, byAddr, reused := reusedAddrSetup(t, (*redistest.Cluster).Seeds, hooks)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The test's refresh has read its cluster's answer (a master's) when
	// every node of the cluster hangs and another refresh runs: it
	// refuses the other cluster's answer at the reused address and, as
	// no node of the cluster answers and that address is a seed, takes
	// it.
	var once atomic.Bool
	var inner atomic.Value
	shard.BeforeKeepFailed(func(cc *shard.Client) {
		if cc != c || !once.CompareAndSwap(false, true) {
			return
		}
		for _, n := range nodes {
			if n.Addr == reused.Addr {
				continue
			}
			s := byAddr[n.Addr]
			if s == nil {
				inner.Store("no server at " + n.Addr)
				return
			}
			if err := s.Pause(); err != nil {
				inner.Store(err.Error())
				return
			}
		}
		if err := c.Refresh(context.WithValue(ctx, mark{}, "meanwhile")); err != nil {
			inner.Store(err.Error())
			return
		}
		inner.Store("ok")
	})
	defer shard.BeforeKeepFailed(nil)
	t.Cleanup(func() {
		for _, n := range nodes {
			if s := byAddr[n.Addr]; s != nil && s != reused {
				_ = s.Resume()
			}
		}
	})
	require.Zero(t, c.Stats().OtherCluster)
	require.NoError(t, c.Refresh(context.WithValue(ctx, mark{}, "mine")))
	require.True(t, once.Load(), "the refresh ran the hook")
	require.Equal(t, "ok", inner.Load(), "the other refresh ran")
	require.Equal(t, []string{reused.Addr}, tableAddrs(t, c), "the other refresh switched the client to the other cluster")
	require.Equal(t, int64(1), c.Stats().ClusterSwitches)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, meanwhile, 1)
	assert.NoError(t, meanwhile[0].Err)
	assert.Equal(t, 1, meanwhile[0].OtherCluster, "the other refresh met the other cluster once")
	assert.True(t, meanwhile[0].SwitchedCluster, "the other refresh switched")
	require.Len(t, mine, 1)
	assert.NoError(t, mine[0].Err)
	assert.Zero(t, mine[0].OtherCluster, "the test's refresh met only its own cluster: %+v", mine[0])
	assert.False(t, mine[0].SwitchedCluster, "the test's refresh took its own cluster's answer: %+v", mine[0])
}
