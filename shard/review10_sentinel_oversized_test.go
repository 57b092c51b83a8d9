package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview10SentinelOversizedValueFailsFast: a SET whose value is over
// the master's proto-max-bulk-len is refused by a healthy master, which
// closes the connection while the value is being written. With
// FailoverWait, such a write (not completely written, so it did not run)
// was taken for a failover's and sent again and again, the whole value
// each time, until FailoverWait ran out, and then failed with a
// *RetryError that blamed a missing new master. A master that resets the
// same command's write twice while it still says it is the master is
// refusing the command: it now fails at once, as on a plain shard, with
// the error that says it did not run. Other writes go on.
func TestReview10SentinelOversizedValueFailsFast(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	master, err := set.Master(0)
	require.NoError(t, err)
	_, err = master.Do("CONFIG", "SET", "proto-max-bulk-len", "1mb")
	require.NoError(t, err)

	for _, auto := range []bool{false, true} {
		name := "direct"
		if auto {
			name = "autopipeline"
		}
		t.Run(name, func(t *testing.T) {
			cfg := sentinelConfig(set)
			const wait = 20 * time.Second
			cfg.Sentinel.FailoverWait = wait
			cfg.Health.Interval = time.Hour // only the commands count the node's failures
			cfg.DisableAutoPipeline = !auto
			c := newClient(t, cfg)
			if auto {
				shard.AlwaysPipeline(c)
			}
			ctx := context.Background()
			big := strings.Repeat("x", 32<<20)

			start := time.Now()
			_, err := c.Do(ctx, "SET", "review10:big", big)
			took := time.Since(start)
			require.Error(t, err)
			t.Logf("after %v: %v", took, err)
			require.False(t, errors.Is(err, shard.ErrRetryBudget), "an oversized value waited for a failover: %v", err)
			var re redis.Error
			if !errors.As(err, &re) { // the protocol error reply, when it came before the reset
				requireNotWritten(t, err, "oversized SET")
			}
			require.Less(t, took, wait/2, "the oversized SET was sent again until FailoverWait ran out")
			require.Zero(t, c.Stats().Sentinel[0].Failovers)

			n, err := redis.Int(c.Do(ctx, "INCR", "review10:n:"+name))
			require.NoError(t, err, "a command after the oversized SET")
			require.Equal(t, 1, n)
		})
	}
	t.Run("Tx", func(t *testing.T) {
		cfg := sentinelConfig(set)
		const wait = 20 * time.Second
		cfg.Sentinel.FailoverWait = wait
		cfg.Health.Interval = time.Hour
		c := newClient(t, cfg)
		ctx := context.Background()
		big := strings.Repeat("x", 32<<20)
		start := time.Now()
		_, err := c.Tx(ctx, []string{"review10:txbig"}, func(tx *shard.Tx) error {
			return tx.Queue("SET", "review10:txbig", big)
		})
		took := time.Since(start)
		require.Error(t, err)
		t.Logf("after %v: %v", took, err)
		require.False(t, errors.Is(err, shard.ErrRetryBudget), "an oversized value waited for a failover: %v", err)
		var uo *shard.UnknownOutcomeError
		require.False(t, errors.As(err, &uo), "%v", err)
		require.Less(t, took, wait/2, "the oversized transaction was sent again until FailoverWait ran out")
	})
}
