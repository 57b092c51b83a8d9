package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/pool"
	"github.com/stretchr/testify/require"
)

// TestReview20SentinelNewMasterRefusesLogin: the Sentinels fail the shard
// over to its replica, which refuses the client's credentials (the
// account was never made there, or its password differs), while the old
// master, which they could not make a replica yet (here: its Sentinel
// account may not run REPLICAOF), still says it is a master. The client
// must not go on writing to the old master: every write there is lost
// once the Sentinels demote it. A write fails with the new master's
// authentication error instead (pool.ErrAuth), and the old master never
// gets it.
func TestReview20SentinelNewMasterRefusesLogin(t *testing.T) {
	set := startSentinelSetApart(t)
	cfg := sentinelConfig(set)
	cfg.Sentinel.FailoverWait = 2 * time.Second
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "k", "before")
	require.NoError(t, err)
	old, next := shardServers(t, set, 0)
	_, err = old.Do("ACL", "SETUSER", "harness", "-replicaof", "-slaveof")
	require.NoError(t, err)
	_, err = next.Do("ACL", "SETUSER", sentDataUser, "resetpass", ">only-on-the-new-master")
	require.NoError(t, err)

	_, err = set.Sentinels[0].Do("SENTINEL", "FAILOVER", set.Names()[0])
	require.NoError(t, err)
	waitFor(t, 60*time.Second, "the Sentinels to name the replica", func() bool {
		for _, s := range set.Sentinels {
			got, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", set.Names()[0])
			if err != nil || !strings.HasSuffix(got, "\n"+next.Addr[strings.LastIndexByte(next.Addr, ':')+1:]) {
				return false
			}
		}
		r, err := next.Do("ROLE")
		return err == nil && strings.HasPrefix(r, "master")
	})
	waitFor(t, 30*time.Second, "the client to hear of the switch", func() bool {
		return c.Stats().Sentinel[0].SwitchMessages > 0
	})
	r, err := old.Do("ROLE")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(r, "master"), "the old master is no longer one (%q): the test shows nothing", r)

	for i := 0; i < 3; i++ {
		_, err = c.Do(ctx, "SET", "k", "after")
		require.Error(t, err, "a write went to the master the Sentinels failed over from")
		require.True(t, errors.Is(err, pool.ErrAuth), "SET = %v, want an error matching pool.ErrAuth", err)
	}
	v, err := old.Do("GET", "k")
	require.NoError(t, err)
	require.Equal(t, "before", v, "the old master took a write after the failover")
}
