package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A ring shard that hangs (paused: connections open, nothing answered)
// while callers keep every connection its pool may open (MaxActive)
// waiting on it is still marked down by the health checks, within a few
// read timeouts: with AutoEject its keys then move to the live shards,
// instead of each caller waiting out a read timeout (and, with Wait, a
// vacancy first). Resumed, it is put back in the ring.
func TestReview20RingHungShardUnderFullPoolIsMarkedDown(t *testing.T) {
	for _, wait := range []bool{true, false} {
		name := "Wait"
		if !wait {
			name = "no Wait"
		}
		t.Run(name, func(t *testing.T) {
			servers := redistest.StartNTB(t, 2, redistest.Options{})
			cfg := ringConfig(servers)
			cfg.Pool.MaxActive, cfg.Pool.Wait = 2, wait
			cfg.Pool.ReadTimeout = 500 * time.Millisecond
			cfg.Health.Timeout = 200 * time.Millisecond
			cfg.Health.AutoEject = true
			c := newClient(t, cfg)
			rr := c.Router().(*shard.RingRouter)
			keys := keysByShard(t, c, 8)
			hung := servers[1]
			ks := keys[hung.Addr]
			pauseUntilCleanup(t, hung)

			stop := loopWorkers(6, func(g, i int) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, _ = c.Do(ctx, "GET", ks[(g+i)%len(ks)])
				cancel()
			})
			deadline := time.Now().Add(8 * time.Second)
			for !rr.Ejected(1) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			stop()
			if !assert.True(t, rr.Ejected(1), "the hung shard was never marked down while callers kept its pool busy") {
				return
			}
			start := time.Now()
			_, err := c.Do(context.Background(), "SET", ks[0], "moved")
			assert.NoError(t, err, "its key moved to a live shard")
			assert.Less(t, time.Since(start), 250*time.Millisecond)

			// Resumed, it is put back and serves its keys again.
			require.NoError(t, hung.Resume())
			waitFor(t, 10*time.Second, "the shard to be restored", func() bool { return !rr.Ejected(1) })
			node, err := c.Router().Route(ks[0])
			require.NoError(t, err)
			assert.Equal(t, hung.Addr, node.Addr)
			_, err = c.Do(context.Background(), "SET", ks[0], "back")
			require.NoError(t, err)
			got, err := hung.Do("GET", ks[0])
			require.NoError(t, err)
			assert.Equal(t, "back", got, "written to the restored shard")
		})
	}
}
