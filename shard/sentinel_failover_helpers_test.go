package shard_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// soleSentinelFailover is a one-shard Sentinel set with one Sentinel left
// (the others killed: nobody else makes the old master a replica), a
// client that asks it alone and queries often, and a failover from old
// to next that the client has followed.
type soleSentinelFailover struct {
	s0        *redistest.Server // the Sentinel left
	name      string            // the master set's name
	c         *shard.Client
	old, next *redistest.Server
	events    func() []string // the master changes c installed (failoverLog)
}

// failedOverBySoleSentinel sets up a soleSentinelFailover: it waits until
// the client has followed the failover and seen its +switch-master.
func failedOverBySoleSentinel(t *testing.T) soleSentinelFailover {
	t.Helper()
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	s0 := set.Sentinels[0]
	for _, s := range set.Sentinels[1:] {
		require.NoError(t, s.Kill()) // nobody else makes the old master a replica
	}
	c, old, next := queryingSentinelClient(t, set, []string{s0.Addr})
	events := failoverLog(c)

	name := set.Shards[0].Name
	_, err := s0.Do("SENTINEL", "FAILOVER", name)
	require.NoError(t, err)
	waitFor(t, 60*time.Second, "the client to follow the failover and see +switch-master", func() bool {
		st := c.Stats().Sentinel[0]
		return st.Master == next.Addr && st.SwitchMessages > 0
	})
	return soleSentinelFailover{s0: s0, name: name, c: c, old: old, next: next, events: events}
}
