package shard_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// When no node of the cluster in use answers, a refresh takes another
// cluster's answer from a seed (the cluster may have been replaced as a
// whole), and from then on every key goes to that cluster. Nothing told
// that apart from an answer refused: Stats.OtherCluster and
// RefreshEvent.OtherCluster, documented as counting refused answers,
// counted the taken one too, and the refresh succeeded, so a program
// read "a stray node of another cluster was refused" while it now wrote
// to another cluster. Stats.ClusterSwitches and
// RefreshEvent.SwitchedCluster now say the client follows another
// cluster.
func TestReview10ClusterSwitchToAnotherClusterIsReported(t *testing.T) {
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
	lastEvent := func() shard.RefreshEvent {
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, events)
		return events[len(events)-1]
	}
	c, nodes, byAddr, reused := reusedAddrSetup(t, (*redistest.Cluster).Seeds, hooks)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The masters hang: a replica of the cluster answers, the other
	// cluster's answer is refused.
	pause(t, byAddr, nodes[:3])
	require.NoError(t, c.Refresh(ctx))
	require.NotContains(t, tableAddrs(t, c), reused.Addr)
	require.Positive(t, c.Stats().OtherCluster)
	require.Zero(t, c.Stats().ClusterSwitches, "the client still follows its cluster")
	require.False(t, lastEvent().SwitchedCluster)

	// No node of the cluster answers: the seed's answer of the other
	// cluster is taken, and that is told.
	pause(t, byAddr, nodes[4:])
	require.NoError(t, c.Refresh(ctx))
	require.Equal(t, []string{reused.Addr}, tableAddrs(t, c))
	require.Equal(t, int64(1), c.Stats().ClusterSwitches, "the switch to another cluster is counted")
	ev := lastEvent()
	require.True(t, ev.SwitchedCluster, "the Refresh hook hears of the switch: %+v", ev)
	require.True(t, ev.Changed)
}
