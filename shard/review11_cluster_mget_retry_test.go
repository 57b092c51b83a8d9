package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview11ClusterMGETGivesUpAsMGET: an MGET whose keys span masters is
// split, and a part of one key is sent as a GET. When such a part gives
// up (its master loads for longer than MaxRetryWait), the *RetryError
// names the command the caller sent, MGET, as it does for a part of
// several keys: it used to say GET, a command the caller never sent.
func TestReview11ClusterMGETGivesUpAsMGET(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{NodeTimeout: time.Minute})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.MaxRetryWait = 300 * time.Millisecond
	c := newClient(t, cfg)
	masters := rc.Masters()
	require.Len(t, masters, 3)
	m := masters[0]
	loading, _ := keyOnMaster(t, rc, m, "review11mgetloading") // a hash tag: "{...}"
	other, _ := keyOnMaster(t, rc, masters[1], "review11mgetother")
	// Two keys of m in different slots: a part of several keys.
	a, slotA := keyOnMaster(t, rc, m, "review11mgeta")
	b := ""
	for i := 0; b == "" && i < 100; i++ {
		if k, s := keyOnMaster(t, rc, m, fmt.Sprintf("review11mgetb%d", i)); s != slotA {
			b = k
		}
	}
	require.NotEmpty(t, b, "no second slot of the master found")
	for i := 0; i < 300; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("%s:%d", loading, i), fmt.Sprintf("%01000d", i))
		require.NoError(t, err)
	}
	probe, reloaded := reloadSlowly(t, m, loading, 15*time.Millisecond) // some 4.5 s

	cases := map[string][]any{
		"one key on the loading master":   {loading, other},
		"two slots of the loading master": {a, b, other},
		"one key there, two elsewhere":    {other, loading, other + "x"},
	}
	for name, keys := range cases {
		_, err := c.Do(ctx, "mget", keys...)
		var re *shard.RetryError
		require.ErrorAs(t, err, &re, name)
		t.Logf("%s: %v", name, err)
		require.Equal(t, "MGET", re.Command, "%s: %v", name, err)
		require.Contains(t, re.Last, "LOADING", name)

		p := c.Pipeline()
		p.Send("MGET", keys...)
		res, err := p.Exec(ctx)
		require.NoError(t, err, name)
		require.Len(t, res, 1, name)
		require.ErrorAs(t, res[0].Err, &re, name)
		require.Equal(t, "MGET", re.Command, "%s, pipelined: %v", name, res[0].Err)
	}
	_, err := probe.Do("GET", loading)
	require.ErrorContains(t, err, "LOADING", "the master was loading throughout")
	require.NoError(t, reloaded())
}
