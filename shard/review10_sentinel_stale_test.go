package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestReview10SentinelStaleSentinelOutvoted: of three Sentinels, one is
// stale (here a Sentinel of another deployment, as one restarted with an
// old configuration would be) and names another server under the same
// master name, a live server that says with ROLE that it is a master (an
// old master restarted empty says so too). Listed first, it is asked
// first. The client must follow the master the two others name, not the
// stale Sentinel's: writes sent there are lost to the real master set.
// Before, the first Sentinel whose answer passed the ROLE check won.
func TestReview10SentinelStaleSentinelOutvoted(t *testing.T) {
	o := sentinelSetOptions(1)
	set := redistest.StartSentinelsTB(t, o)
	so := sentinelSetOptions(1)
	so.Sentinels = 1
	stale := redistest.StartSentinelsTB(t, so)
	require.Equal(t, set.Names()[0], stale.Names()[0], "both deployments monitor the same master name")

	real, err := set.Master(0)
	require.NoError(t, err)
	wrong, err := stale.Master(0)
	require.NoError(t, err)
	require.NotEqual(t, real.Addr, wrong.Addr)

	cfg := sentinelConfig(set)
	cfg.Sentinel.Addrs = []string{stale.Sentinels[0].Addr, set.Sentinels[0].Addr, set.Sentinels[1].Addr}
	c := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	check := func(when string) {
		t.Helper()
		st := c.Stats().Sentinel
		require.Len(t, st, 1)
		require.Equal(t, real.Addr, st[0].Master, "%s: the client follows the stale Sentinel's master", when)
	}
	check("after New")
	for range 3 {
		require.NoError(t, c.Refresh(ctx))
		check("after Refresh")
	}
	_, err = c.Do(ctx, "SET", "stale:k", "v")
	require.NoError(t, err)
	got, err := real.Do("GET", "stale:k")
	require.NoError(t, err)
	require.Equal(t, "v", got, "the write did not reach the real master")
	got, err = wrong.Do("EXISTS", "stale:k")
	require.NoError(t, err)
	require.Equal(t, "0", got, "the write went to the stale Sentinel's master")
}
