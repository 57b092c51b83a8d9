package shard_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
)

// The Sentinels' user may ask GET-MASTER-ADDR-BY-NAME but not SENTINEL
// MASTER, so a one-to-one tie (one Sentinel of three down, one stale)
// has no config epochs to go by. It went to the Sentinel listed first:
// the stale one, whose server still says it is a master, and the shard
// wrote there. The answers of such a tie are now all checked with ROLE,
// and the master whose ROLE lists the most replicas wins: the set's
// replicas follow the master of the latest failover.
func TestReview17SentinelTieWithoutEpochsTakesTheMasterWithReplicas(t *testing.T) {
	x := startStaleSentinelSet(t)
	s := x.s
	require.NoError(t, s[2].Kill())
	// s[1] would tell s[0] of the failover (its hello messages reach the
	// Sentinels it knows): it forgets them, and s[0] is made stale again.
	_, err := s[1].Do("SENTINEL", "RESET", x.name)
	require.NoError(t, err)
	_, err = s[0].Do("SENTINEL", "REMOVE", x.name)
	require.NoError(t, err)
	monitorAs(t, s[0], x.name, x.stale.Port)
	waitSentinelNames(t, s[0], x.name, x.stale.Port)
	for _, sx := range s[:2] {
		_, err := sx.Do("ACL", "SETUSER", "default", "-sentinel|master")
		require.NoError(t, err)
		_, err = sx.Do("SENTINEL", "MASTER", x.name)
		require.Error(t, err, "SENTINEL MASTER refused")
	}
	var orig *redistest.Server // the master before the failover
	for _, n := range x.set.Shards[0].Nodes {
		if n != x.promoted {
			orig = n
		}
	}
	_, err = orig.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(x.promoted.Port))
	require.NoError(t, err)
	waitFor(t, 60*time.Second, "the promoted master to list its replica", func() bool {
		out, err := x.promoted.Do("ROLE")
		return err == nil && strings.Contains(out, strconv.Itoa(orig.Port))
	})
	out, err := x.stale.Do("ROLE")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, "master\n"), "the stale server says it is a master: %q", out)

	c := x.clientOver(t, s[0].Addr, s[1].Addr) // the stale Sentinel first
	require.Equal(t, x.promoted.Addr, masterOf(c), "the master with a replica, not the stale %s", x.stale.Addr)
	require.NoError(t, c.Refresh(context.Background()))
	require.Equal(t, x.promoted.Addr, masterOf(c), "after a Refresh")
}
