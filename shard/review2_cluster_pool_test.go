package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A full pool (MaxActive reached, no Wait) fails a command before it is
// sent. In cluster mode that is final at once, as in ring mode and as
// pool.Options.Wait says: a write is not reported as an
// *UnknownOutcomeError (nothing was sent), and a read does not spin
// through MaxRetryWait refreshing the topology.
func TestReview2ClusterFullPoolIsFinalAndNotUnknownOutcome(t *testing.T) {
	rc := clusterForTest(t)
	for _, auto := range []bool{false, true} {
		name := "pooled"
		if auto {
			name = "auto-pipelined"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			cfg := clusterConfig(rc.Seeds()...)
			cfg.Pool.MaxActive = 1
			cfg.Pool.Wait = false
			cfg.DisableAutoPipeline = !auto
			cfg.Cluster.MaxRetryWait = 4 * time.Second
			c := newClient(t, cfg)
			key := "{review2full}" + name
			other := "{review2full}" + name + ":other"
			_, err := c.Do(ctx, "DEL", other)
			require.NoError(t, err)

			errStop := errors.New("stop")
			var setErr, getErr error
			var setTook, getTook time.Duration
			var pipeRes []shard.Result
			var pipeErr error
			// The transaction holds the only connection to the slot's
			// master while its function runs.
			_, err = c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				start := time.Now()
				_, setErr = c.Do(ctx, "SET", other, "v")
				setTook = time.Since(start)
				start = time.Now()
				_, getErr = c.Do(ctx, "GET", other)
				getTook = time.Since(start)
				p := c.Pipeline()
				p.Send("SET", other, "p")
				p.Send("GET", other)
				pipeRes, pipeErr = p.Exec(ctx)
				return errStop
			})
			require.ErrorIs(t, err, errStop)

			require.Error(t, setErr)
			assert.ErrorIs(t, setErr, redis.ErrPoolExhausted)
			var uo *shard.UnknownOutcomeError
			assert.False(t, errors.As(setErr, &uo), "a write that was never sent has no unknown outcome: %v", setErr)
			assert.False(t, errors.Is(setErr, shard.ErrRetryBudget), "not retried until the budget ran out: %v", setErr)
			assert.Less(t, setTook, 2*time.Second, "SET failed at once")

			require.Error(t, getErr)
			assert.ErrorIs(t, getErr, redis.ErrPoolExhausted)
			assert.False(t, errors.Is(getErr, shard.ErrRetryBudget), "not retried until the budget ran out: %v", getErr)
			assert.Less(t, getTook, 2*time.Second, "GET failed at once")

			require.NoError(t, pipeErr)
			require.Len(t, pipeRes, 2)
			for i, r := range pipeRes {
				assert.ErrorIs(t, r.Err, redis.ErrPoolExhausted, "pipeline command %d", i)
				assert.False(t, errors.As(r.Err, &uo), "pipeline command %d: %v", i, r.Err)
			}

			// Nothing was sent: the key is still missing.
			n, err := redis.Int(c.Do(ctx, "EXISTS", other))
			require.NoError(t, err)
			assert.Zero(t, n)
		})
	}
}
