package shardisotel_test

import (
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Sentinel shard's failover is counted (shardis.client.node.events,
// "replica_promoted") under the new master's server.address and
// server.port with the shard's name in shardis.node, as its other node
// events and its commands are. Its event named the new master as the
// node's address too, so the count had no shardis.node: a series that no
// filter on the shard found.
func TestReview11SentinelPromotionNamesTheShard(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Replicas: 1, Sentinels: 1,
		DownAfter: time.Second, FailoverTimeout: 2 * time.Second})
	master, err := set.Master(0)
	require.NoError(t, err)
	next, err := set.Replica(0)
	require.NoError(t, err)
	wantHost, wantPort := hostPort(t, next.Addr)
	tel := instrumented(t, sentinelShardConfig(set))
	require.NoError(t, master.Kill())

	promoted := countedNodeEvents(t, tel, shard.ReplicaPromoted.String(), 60*time.Second)
	require.NotEmpty(t, promoted, "no node event %q counted within 60s", shard.ReplicaPromoted.String())
	for _, a := range promoted {
		assert.Equal(t, wantHost, a["server.address"], "%v", a)
		assert.Equal(t, wantPort, a["server.port"], "%v", a)
		assert.Equal(t, "s0", a["shardis.node"], "%v", a)
	}
}
