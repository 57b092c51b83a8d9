package shard_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestSentinelSwitchMissedWhileUnsubscribedIsFollowed: a failover that
// the Sentinels announced while the client's +switch-master subscription
// was down (here the Sentinel refused the client's login for a while) is
// followed once the subscription is back, without waiting for a command
// to fail or for a periodic query (turned off here): a subscription that
// comes back after a loss asks for a query, since a message may have been
// missed meanwhile. Before, the client went on using the old master (now
// a replica: reads served from it, writes refused) until something else
// asked the Sentinels.
func TestSentinelSwitchMissedWhileUnsubscribedIsFollowed(t *testing.T) {
	const cliUser, cliPW = "watcher", "watcher-secret-3"
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	o.SentinelUser = "sentinel-admin"
	set := redistest.StartSentinelsTB(t, o)
	s := set.Sentinels[0]
	_, err := s.Do("ACL", "SETUSER", cliUser, "on", ">"+cliPW, "~*", "&*", "+@all")
	require.NoError(t, err)

	cfg := sentinelConfig(set)
	cfg.Sentinel.Username, cfg.Sentinel.Password = cliUser, cliPW
	cfg.Sentinel.RefreshInterval = -1 // no periodic query
	c := newClient(t, cfg)
	old, err := set.Master(0)
	require.NoError(t, err)
	require.Equal(t, old.Addr, c.Stats().Sentinel[0].Master)
	waitFor(t, 10*time.Second, "the subscription", func() bool { return c.Stats().Sentinel[0].Subscribed == 1 })

	// The Sentinel refuses the client and drops its connections.
	_, err = s.Do("ACL", "SETUSER", cliUser, "off")
	require.NoError(t, err)
	_, err = s.Do("CLIENT", "KILL", "USER", cliUser)
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the subscription to be lost", func() bool { return c.Stats().Sentinel[0].Subscribed == 0 })

	// A failover while the client is not subscribed.
	// NOGOODSLAVE until the Sentinel has seen the replica fit (its INFO
	// is read every few seconds).
	waitFor(t, 30*time.Second, "the Sentinel to start a failover", func() bool {
		_, err := s.Do("SENTINEL", "FAILOVER", set.Names()[0])
		return err == nil || strings.Contains(err.Error(), "INPROG")
	})
	var next *redistest.Server
	waitFor(t, 30*time.Second, "the failover", func() bool {
		m, err := set.Master(0)
		if err != nil || m == old {
			return false
		}
		addr, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", set.Names()[0])
		if err != nil || !strings.HasSuffix(strings.ReplaceAll(addr, "\n", ":"), ":"+strconv.Itoa(m.Port)) {
			return false
		}
		next = m
		return true
	})
	require.Equal(t, old.Addr, c.Stats().Sentinel[0].Master, "the client has not heard of the failover yet")

	_, err = s.Do("ACL", "SETUSER", cliUser, "on")
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the subscription to come back", func() bool { return c.Stats().Sentinel[0].Subscribed == 1 })
	waitFor(t, 10*time.Second, "the client to follow the new master", func() bool {
		return c.Stats().Sentinel[0].Master == next.Addr
	})
	_, err = c.Do(context.Background(), "SET", "missed", "1")
	require.NoError(t, err)
	got, err := next.Do("GET", "missed")
	require.NoError(t, err)
	require.Equal(t, "1", got)
}
