package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestSentinelGiveUpSaysTheSentinelsAreDown: with the master and every
// Sentinel of a shard dead, a command that waited FailoverWait for a new
// master gives up in about that time (no hang) with an error that says
// why no new master came: it matches sentinel.ErrNoSentinel (and still
// ErrRetryBudget and the master's *NodeError), and its text says so,
// without the Sentinels' password. Before, nothing in the error told a
// dead master with Sentinels at work from Sentinels that cannot be asked.
func TestSentinelGiveUpSaysTheSentinelsAreDown(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	cfg := sentinelConfig(set)
	cfg.Sentinel.FailoverWait = time.Second
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "down:k", "1")
	require.NoError(t, err)

	require.NoError(t, set.Sentinels[0].Kill())
	m, err := set.Master(0)
	require.NoError(t, err)
	require.NoError(t, m.Kill())

	start := time.Now()
	_, err = c.Do(ctx, "SET", "down:k", "2")
	took := time.Since(start)
	require.Error(t, err)
	t.Logf("after %v: %v", took, err)
	require.Less(t, took, 10*time.Second)
	require.ErrorIs(t, err, shard.ErrRetryBudget)
	var ne *shard.NodeError
	require.ErrorAs(t, err, &ne)
	require.True(t, errors.Is(err, sentinel.ErrNoSentinel), "the Sentinels could not be asked: %v", err)
	require.True(t, strings.Contains(err.Error(), "Sentinel"), "%v", err)
	require.NotContains(t, err.Error(), sentPW)
}
