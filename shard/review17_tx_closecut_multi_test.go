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

// TestReview17TxLostMultiReplyOutcome: when a transaction's connection
// fails (here a read timeout: the server is stopped) before MULTI's reply
// came, MULTI, which changes no data, failed; only the queued write and
// EXEC may have run (OutcomeUnknown) in the hooks' Pipeline event.
func TestReview17TxLostMultiReplyOutcome(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	rec := &recorder{}
	cfg := ringConfig(servers)
	cfg.Pool.ReadTimeout = 500 * time.Millisecond
	cfg.Health.Interval = -1
	cfg.Hooks = rec.hooks()
	c := newClient(t, cfg)
	paused := false
	defer func() {
		if paused {
			assert.NoError(t, servers[0].Resume())
		}
	}()
	_, err := c.Tx(context.Background(), []string{"r17txlost:k"}, func(tx *shard.Tx) error {
		if err := tx.Queue("SET", "r17txlost:k", "v"); err != nil {
			return err
		}
		paused = true
		return servers[0].Pause() // MULTI ... EXEC is written to a stopped server
	})
	var uo *shard.UnknownOutcomeError
	require.ErrorAs(t, err, &uo)
	require.NoError(t, servers[0].Resume())
	paused = false
	got := rec.snapshot()
	require.Len(t, got.pipelines, 1)
	ev := got.pipelines[0]
	assert.Equal(t, 2, ev.Outcomes[shard.OutcomeUnknown], "SET and EXEC: %v", ev.Outcomes)
	assert.Equal(t, 1, ev.Outcomes[shard.OutcomeTimeout]+ev.Outcomes[shard.OutcomeFailed], "MULTI: %v", ev.Outcomes)
}
