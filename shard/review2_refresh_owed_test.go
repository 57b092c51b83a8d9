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
// passed, not at the next periodic refresh (turned off here), with health
// checks on and with them off (Health.Interval < 0), when nothing else
// would ever run it.
func TestRefreshHeldBackByTheRateLimitRunsLater(t *testing.T) {
	for _, tc := range []struct {
		name   string
		health time.Duration
	}{
		{"health checks on", 50 * time.Millisecond},
		{"health checks off", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
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
			cfg.Cluster.MinRefreshInterval = time.Second
			cfg.Cluster.RefreshInterval = -1
			cfg.Health.Interval = tc.health
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

			waitFor(t, 15*time.Second, "the refresh the rate limit held back", func() bool {
				mu.Lock()
				defer mu.Unlock()
				for _, s := range starts {
					if s.After(asked) {
						return true
					}
				}
				return false
			})
		})
	}
}
