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

// TestReview17ForEachShardCloseCutMultiOutcome: when Close cuts off a
// BLPOP on a connection lent to a ForEachShard function, a MULTI (or a
// PING) sent after it, whose reply is unread too, changed no data: the
// hooks report it OutcomeFailed, and only the BLPOP (a write: it pops)
// OutcomeUnknown.
func TestReview17ForEachShardCloseCutMultiOutcome(t *testing.T) {
	for _, after := range []string{"MULTI", "PING"} {
		t.Run(after, func(t *testing.T) {
			servers := redistest.StartNTB(t, 1, redistest.Options{})
			rec := &recorder{}
			cfg := ringConfig(servers)
			cfg.Hooks = rec.hooks()
			c, err := shard.New(context.Background(), cfg)
			require.NoError(t, err)
			done := make(chan error, 1)
			go func() {
				var cmdErr error
				err := c.ForEachShard(context.Background(), func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
					if cmdErr = conn.Send("BLPOP", "r17cutmulti:list", 0); cmdErr != nil {
						return nil
					}
					_, cmdErr = conn.Do(after)
					return nil
				})
				if err == nil {
					err = cmdErr
				}
				done <- err
			}()
			waitFor(t, 15*time.Second, "blpop in flight", func() bool { return r16BlockedOn(servers[0], "blpop") })
			require.NoError(t, c.Close())
			select {
			case err := <-done:
				require.ErrorIs(t, err, shard.ErrClosed)
			case <-time.After(15 * time.Second):
				t.Fatal("the callback did not return after Close")
			}
			got := rec.snapshot()
			require.Len(t, got.pipelines, 1)
			ev := got.pipelines[0]
			assert.Equal(t, 1, ev.Outcomes[shard.OutcomeUnknown], "BLPOP: %v", ev.Outcomes)
			assert.Equal(t, 1, ev.Outcomes[shard.OutcomeFailed], "%s: %v", after, ev.Outcomes)
		})
	}
}
