package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// drainUntilPongs reads sub until it has one pong per open connection
// (each connection answers a PING after everything it received before),
// and returns what came before.
func drainUntilPongs(t *testing.T, ctx context.Context, sub *shard.Subscription) []any {
	t.Helper()
	want := sub.Stats().Connections
	require.NoError(t, sub.Ping(ctx, "r17-barrier"))
	var got []any
	for pongs := 0; pongs < want; {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := sub.Receive(rctx)
		cancel()
		require.NoError(t, err, "after %v", got)
		if p, ok := v.(redis.Pong); ok && p.Data == "r17-barrier" {
			pongs++
			continue
		}
		got = append(got, v)
	}
	return got
}

// A channel named twice, subscribed again, and overlapped by a pattern:
// one confirmation per new name (Count over the whole subscription), one
// message per subscription that matches (the channel's, the pattern's),
// never one per node carrying the pattern, and an unsubscribe named twice
// confirmed once; the pattern goes on alone.
func TestReview17PubSubDuplicateAndOverlappingNames(t *testing.T) {
	ringServers := redistest.StartNTB(t, 3, redistest.Options{})
	modes := []modeConfig{{"ring", ringConfig(ringServers)}, {"cluster", clusterConfig(clusterForTest(t).Seeds()...)}}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			c := newClient(t, m.cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			const ch, pat = "r17ov:{x}", "r17ov:*"
			sub, err := c.NewSubscription(shard.SubscriptionOptions{})
			require.NoError(t, err)
			defer sub.Close()
			require.NoError(t, sub.Subscribe(ctx, ch, ch))
			require.NoError(t, sub.Subscribe(ctx, ch))
			assert.Equal(t, []any{redis.Subscription{Kind: "subscribe", Channel: ch, Count: 1}}, drainUntilPongs(t, ctx, sub))

			require.NoError(t, sub.PSubscribe(ctx, pat, pat))
			assert.Equal(t, []any{redis.Subscription{Kind: "psubscribe", Channel: pat, Count: 2}}, drainUntilPongs(t, ctx, sub))

			// In cluster mode the message reaches the home over the
			// cluster bus, after the pongs maybe: read up to a marker that
			// comes after it on the same path instead.
			until := func(data string, n int) []any {
				var got []any
				for seen := 0; seen < n; {
					rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
					v, err := sub.Receive(rctx)
					rcancel()
					require.NoError(t, err, "after %v", got)
					got = append(got, v)
					if m, ok := v.(redis.Message); ok && string(m.Data) == data {
						seen++
					}
				}
				return got
			}
			_, err = c.Do(ctx, "PUBLISH", ch, "m1")
			require.NoError(t, err)
			assert.ElementsMatch(t, []any{
				redis.Message{Channel: ch, Data: []byte("m1")},
				redis.Message{Channel: ch, Pattern: pat, Data: []byte("m1")},
			}, until("m1", 2))
			require.NoError(t, sub.Unsubscribe(ctx, ch, ch))
			_, err = c.Do(ctx, "PUBLISH", ch, "m2")
			require.NoError(t, err)
			assert.Equal(t, []any{
				redis.Subscription{Kind: "unsubscribe", Channel: ch, Count: 1},
				redis.Message{Channel: ch, Pattern: pat, Data: []byte("m2")},
			}, until("m2", 1))
			assert.Empty(t, drainUntilPongs(t, ctx, sub))
			st := sub.Stats()
			assert.Equal(t, 0, st.Channels)
			assert.Equal(t, 1, st.Patterns)
			assert.Zero(t, st.Dropped)
		})
	}
}
