package shard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestSentinelSubscriptionRefusedIsReported: a Sentinel ACL user that may
// run queries but not subscribe to +switch-master (Redis 7 gives a new
// user no channel: acl-pubsub-default resetchannels) leaves the client
// without failover messages. The client still works (failures and
// periodic queries find a new master), but Stats must say why it is not
// subscribed rather than show Subscribed 0 with no reason; the reason
// never holds the password.
func TestSentinelSubscriptionRefusedIsReported(t *testing.T) {
	const cliUser, cliPW = "nochannels", "nochannels-secret-4"
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	o.SentinelUser = "sentinel-admin"
	set := redistest.StartSentinelsTB(t, o)
	_, err := set.Sentinels[0].Do("ACL", "SETUSER", cliUser, "on", ">"+cliPW, "~*", "resetchannels", "+@all")
	require.NoError(t, err)

	cfg := sentinelConfig(set)
	cfg.Sentinel.Username, cfg.Sentinel.Password = cliUser, cliPW
	c := newClient(t, cfg)
	waitFor(t, 10*time.Second, "the refused subscription to be reported", func() bool {
		return c.Stats().Sentinel[0].SubscribeError != ""
	})
	st := c.Stats().Sentinel[0]
	require.Equal(t, 0, st.Subscribed)
	require.Contains(t, st.SubscribeError, "NOPERM")
	require.Contains(t, st.SubscribeError, set.Sentinels[0].Addr)
	require.NotContains(t, st.SubscribeError, cliPW)
	require.False(t, strings.Contains(c.String(), cliPW))

	// Once the user may subscribe, the subscription comes up and the
	// report goes.
	_, err = set.Sentinels[0].Do("ACL", "SETUSER", cliUser, "&*")
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the subscription", func() bool {
		st := c.Stats().Sentinel[0]
		return st.Subscribed == 1 && st.SubscribeError == ""
	})
}
