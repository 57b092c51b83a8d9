package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Close while a lost connection is being dialled again (the server hung,
// so the dial waits in CLIENT SETNAME) returns at once and leaves no
// goroutine behind; after a killed server, the same in backoff.
func TestReview2PubSubCloseDuringRedial(t *testing.T) {
	for _, hung := range []bool{true, false} {
		name := "killed"
		if hung {
			name = "hung"
		}
		t.Run(name, func(t *testing.T) {
			servers := redistest.StartNTB(t, 1, redistest.Options{})
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			cfg := ringConfig(servers)
			cfg.Health.Interval = -1
			cfg.Pool.ClientName = "r2close"
			cfg.Pool.DialTimeout = 30 * time.Second
			c, err := shard.New(context.Background(), cfg)
			require.NoError(t, err)
			defer c.Close()
			ctx := context.Background()
			sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: 100 * time.Millisecond, PingTimeout: 200 * time.Millisecond})
			require.NoError(t, err)
			require.NoError(t, sub.Subscribe(ctx, "r2close:a"))
			if hung {
				require.NoError(t, servers[0].Pause())
				defer func() { _ = servers[0].Resume() }()
				waitFor(t, 10*time.Second, "a redial", func() bool { return sub.Stats().Dials >= 2 })
			} else {
				require.NoError(t, servers[0].Kill())
				waitFor(t, 10*time.Second, "two failed redials", func() bool { return sub.Stats().DialErrors >= 2 })
			}
			start := time.Now()
			require.NoError(t, sub.Close())
			assert.Less(t, time.Since(start), 5*time.Second, "Close waited for the dial")
			require.NoError(t, c.Close())
		})
	}
}
