package shardisotel_test

import (
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Sentinel shard's node events are counted under its master's
// server.address and server.port, with the shard's name in shardis.node,
// as its commands are: they were counted under server.address
// "sentinel/<name>" and server.port 0, a series of their own that no
// command's measurement shares.
func TestReview11SentinelNodeEventsNameTheMaster(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Replicas: 0, Sentinels: 1})
	master, err := set.Master(0)
	require.NoError(t, err)
	wantHost, wantPort := hostPort(t, master.Addr)
	tel := instrumented(t, sentinelShardConfig(set))
	require.NoError(t, master.Kill())

	downs := countedNodeEvents(t, tel, "down", 30*time.Second)
	require.NotEmpty(t, downs, "no node event \"down\" counted within 30s")
	for _, a := range downs {
		assert.Equal(t, wantHost, a["server.address"], "%v", a)
		assert.Equal(t, wantPort, a["server.port"], "%v", a)
		assert.Equal(t, "s0", a["shardis.node"], "%v", a)
	}
}
