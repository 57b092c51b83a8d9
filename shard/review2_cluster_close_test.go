package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command that is waiting out a slot migration (TRYAGAIN) when the
// client is closed ends soon after Close with ErrClosed: it neither keeps
// retrying against the closed pools until MaxRetryWait, nor reports a
// write that never reached a server as an *UnknownOutcomeError.
func TestReview2ClusterCloseEndsARetryingCommand(t *testing.T) {
	ctx := context.Background()
	rc := clusterForTest(t)
	m := rc.Masters()
	a, b := m[0], m[1]
	key := tryAgainSlot(t, rc, a, b, "review2close")

	for _, cmd := range [][]any{
		{"MGET", key + "1", key + "2"},
		{"MSET", key + "1", "y", key + "2", "y"},
	} {
		t.Run(cmd[0].(string), func(t *testing.T) {
			cfg := clusterConfig(rc.Seeds()...)
			cfg.Cluster.MaxRetryWait = 30 * time.Second
			c, err := shard.New(ctx, cfg)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })
			done := make(chan error, 1)
			go func() {
				_, err := c.Do(ctx, cmd[0].(string), cmd[1:]...)
				done <- err
			}()
			waitFor(t, 10*time.Second, "the command to meet TRYAGAIN", func() bool {
				_, _, tryAgain := stats(c)
				return tryAgain > 0
			})
			closedAt := time.Now()
			require.NoError(t, c.Close())
			err = nil
			select {
			case err = <-done:
			case <-time.After(40 * time.Second):
				t.Fatal("the command did not end after Close")
			}
			took := time.Since(closedAt)
			require.Error(t, err)
			assert.Less(t, took, 3*time.Second, "ended soon after Close: %v", err)
			assert.ErrorIs(t, err, shard.ErrClosed)
			var uo *shard.UnknownOutcomeError
			assert.False(t, errors.As(err, &uo), "nothing was sent after Close: %v", err)
		})
	}
}
