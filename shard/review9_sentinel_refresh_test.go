package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// Refresh asks a Sentinel shard's Sentinels for its master now and waits
// for the answer, as it reloads a cluster's topology: after a change the
// client could not hear of (a master set re-monitored by hand, messages
// missed), a program can make it look. It did nothing in ring mode, even
// with Sentinel shards, and said nothing when no Sentinel could answer.
func TestReview9RefreshAsksTheSentinels(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(2))
	cfg := sentinelConfig(set)
	cfg.Sentinel.RefreshInterval = -1 // no periodic query
	c := newClient(t, cfg)
	ctx := context.Background()

	queries := func() []int64 {
		st := c.Stats().Sentinel
		require.Len(t, st, 2)
		return []int64{st[0].Queries, st[1].Queries}
	}
	before := queries()
	require.NoError(t, c.Refresh(ctx))
	after := queries()
	for i := range after {
		require.Greater(t, after[i], before[i], "Refresh returned before shard %d's Sentinels were asked", i)
	}
	st := c.Stats().Sentinel
	for i := range st {
		m, err := set.Master(i)
		require.NoError(t, err)
		require.Equal(t, m.Addr, st[i].Master)
		require.False(t, st[i].Stale)
	}

	// With every Sentinel gone, Refresh says so; the last known masters
	// keep serving.
	for _, s := range set.Sentinels {
		require.NoError(t, s.Kill())
	}
	err := c.Refresh(ctx)
	require.Error(t, err, "no Sentinel could answer")
	require.True(t, errors.Is(err, sentinel.ErrNoSentinel), "%v", err)
	_, err = c.Do(ctx, "SET", "r9refresh", "v")
	require.NoError(t, err)

	// A Refresh whose context ends first returns the context's error.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = c.Refresh(cctx)
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
}
