package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview14ScanDoesNotWaitForAWalkedMasterThatDied: a master with no
// replica dies (SIGKILL) once its walk is over, while the other masters
// are walked. Its keys were all reported already; the others answer. The
// Scan must end, with every key, without waiting for the dead master
// until MaxRetryWait, and with a *ScanIncompleteError naming it: it
// cannot tell whether a slot left it during its walk and came back.
// The health checks are off so that the client cannot know the master is
// down before the Scan asks it something.
func TestReview14ScanDoesNotWaitForAWalkedMasterThatDied(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and kills a master")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Health.Interval = -1
	cfg.Cluster.RefreshInterval = -1
	const maxWait = 40 * time.Second
	cfg.Cluster.MaxRetryWait = maxWait
	c := newClient(t, cfg)
	ms := c.Nodes()
	require.Len(t, ms, 3)
	byAddr := map[string]*redistest.Server{}
	for _, s := range rc.Masters() {
		byAddr[s.Addr] = s
	}
	want := fillKeys(ctx, t, c, "dead", 900)
	ownerOf := map[string]string{}
	for _, k := range want {
		n, err := c.Router().Route(k)
		require.NoError(t, err)
		ownerOf[k] = n.Addr
	}
	first := byAddr[ms[0].Addr]
	require.NotNil(t, first)

	seen := map[string]int{}
	sc := c.Scan(shard.ScanOptions{Match: "dead:*", Count: 20})
	var killedAt time.Time
	for sc.Next(ctx) {
		k := sc.Key()
		seen[k]++
		if killedAt.IsZero() && ownerOf[k] != first.Addr {
			// The first master's walk is over.
			require.NoError(t, first.Kill())
			killedAt = time.Now()
		}
	}
	took := time.Since(killedAt)
	require.False(t, killedAt.IsZero(), "the walk went past the first master")
	// The dead master cannot tell, as the Scan ends, whether a slot came
	// back to it during its walk or moved to it since: the Scan says so.
	require.ErrorIs(t, sc.Err(), shard.ErrScanIncomplete)
	var se *shard.ScanIncompleteError
	require.ErrorAs(t, sc.Err(), &se)
	require.Equal(t, first.Addr, se.Node.Addr)
	requireEveryKey(t, want, seen)
	t.Logf("the Scan ended %v after the walked master died", took)
	require.Less(t, took, maxWait/2, "the Scan waited for a master whose walk was over")
}
