package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/stretchr/testify/require"
)

// TestReview20SentinelNewMasterRefusesLogin: the Sentinels fail the shard
// over to its replica, which refuses the client's credentials (the
// account was never made there, or its password differs), while the old
// master, which they could not make a replica yet (here: their account
// there may not run REPLICAOF), still says it is a master. The client
// must not go on writing to the old master: every write there is lost
// once the Sentinels demote it. A write fails with the new master's
// authentication error instead (pool.ErrAuth), and the old master never
// gets it, without a wait for a failover that cannot mend credentials:
// whether the client hears the +switch-master or (its Sentinel
// account may not subscribe) only asks the Sentinels.
func TestReview20SentinelNewMasterRefusesLogin(t *testing.T) {
	for _, subscribed := range []bool{true, false} {
		name := "switch message"
		if !subscribed {
			name = "query"
		}
		t.Run(name, func(t *testing.T) { newMasterRefusesLogin(t, subscribed) })
	}
}

func newMasterRefusesLogin(t *testing.T, subscribed bool) {
	const cliUser, cliPW = "r20-watcher", "r20-watcher-secret"
	opts := sentinelSetOptions(1)
	opts.Data.Users = []redistest.User{{Name: "harness", Password: "harness-secret"}, {Name: sentDataUser, Password: sentDataPW}}
	opts.SentinelUser = "sentinel-admin"
	set := redistest.StartSentinelsTB(t, opts)
	channels := "&*"
	if !subscribed {
		channels = "resetchannels"
	}
	for _, s := range set.Sentinels {
		_, err := s.Do("ACL", "SETUSER", cliUser, "on", ">"+cliPW, "~*", channels, "+@all")
		require.NoError(t, err)
	}
	cfg := sentinelConfig(set)
	cfg.Sentinel.Username, cfg.Sentinel.Password = cliUser, cliPW
	cfg.Sentinel.RefreshInterval = 100 * time.Millisecond
	const wait = 10 * time.Second
	cfg.Sentinel.FailoverWait = wait
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "k", "before")
	require.NoError(t, err)
	old, next := shardServers(t, set, 0)
	_, err = old.Do("ACL", "SETUSER", "harness", "-replicaof", "-slaveof")
	require.NoError(t, err)
	_, err = next.Do("ACL", "SETUSER", sentDataUser, "resetpass", ">only-on-the-new-master")
	require.NoError(t, err)

	waitFor(t, 30*time.Second, "the Sentinel to start a failover", func() bool {
		_, err := set.Sentinels[0].Do("SENTINEL", "FAILOVER", set.Names()[0])
		return err == nil || strings.Contains(err.Error(), "INPROG")
	})
	port := next.Addr[strings.LastIndexByte(next.Addr, ':')+1:]
	waitFor(t, 60*time.Second, "every Sentinel to name the replica", func() bool {
		for _, s := range set.Sentinels {
			got, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", set.Names()[0])
			if err != nil || !strings.HasSuffix(got, "\n"+port) {
				return false
			}
		}
		r, err := next.Do("ROLE")
		return err == nil && strings.HasPrefix(r, "master")
	})
	if subscribed {
		waitFor(t, 30*time.Second, "the client to hear of the switch", func() bool {
			return c.Stats().Sentinel[0].SwitchMessages > 0
		})
	} else {
		q := c.Stats().Sentinel[0].Queries
		waitFor(t, 30*time.Second, "two queries", func() bool { return c.Stats().Sentinel[0].Queries >= q+2 })
	}
	r, err := old.Do("ROLE")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(r, "master"), "the old master is no longer one (%q): the test shows nothing", r)

	for i := 0; i < 3; i++ {
		start := time.Now()
		_, err = c.Do(ctx, "SET", "k", "after")
		took := time.Since(start)
		require.Error(t, err, "a write went to the master the Sentinels failed over from")
		require.True(t, errors.Is(err, pool.ErrAuth), "SET = %v, want an error matching pool.ErrAuth", err)
		// No failover brings credentials that work: the call does not
		// wait for one.
		require.Less(t, took, wait/2, "SET = %v after %v", err, took)
	}
	v, err := old.Do("GET", "k")
	require.NoError(t, err)
	require.Equal(t, "before", v, "the old master took a write after the failover")
}
