package shard_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestRefreshHeldBackByTheRateLimitRunsLater checks that a topology
// refresh asked for within MinRefreshInterval of the last one (a MOVED
// right after another) is not dropped: it runs once the interval has
// passed, not at the next periodic refresh (turned off here).
func TestRefreshHeldBackByTheRateLimitRunsLater(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	masters := rc.Masters()
	require.Len(t, masters, 3)
	a, b := masters[0], masters[1]
	k1, s1 := keyOnMaster(t, rc, a, "owed1")
	k2, s2 := keyOnMaster(t, rc, a, "owed2")
	require.NotEqual(t, s1, s2)

	var mu sync.Mutex
	var starts []time.Time
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.MinRefreshInterval = 2 * time.Second
	cfg.Cluster.RefreshInterval = -1
	cfg.Health.Interval = 50 * time.Millisecond
	cfg.Hooks = &shard.Hooks{Refresh: func(_ context.Context, ev *shard.RefreshEvent) {
		mu.Lock()
		defer mu.Unlock()
		starts = append(starts, ev.Start)
	}}
	c := newClient(t, cfg)
	ctx := context.Background()

	moveSlot(t, s1, a, b, masters)
	_, err := redis.String(c.Do(ctx, "GET", k1)) // MOVED: a refresh, run or held back
	require.ErrorIs(t, err, redis.ErrNil)
	moveSlot(t, s2, a, b, masters)
	_, err = redis.String(c.Do(ctx, "GET", k2)) // MOVED again, within the interval
	require.ErrorIs(t, err, redis.ErrNil)
	asked := time.Now()

	deadline := time.Now().Add(15 * time.Second)
	for {
		mu.Lock()
		var after int
		for _, s := range starts {
			if s.After(asked) {
				after++
			}
		}
		mu.Unlock()
		if after > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no refresh ran after the one the rate limit held back")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
