package shardisotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
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
	cfg := shard.Config{
		Pool:     pool.Options{DialTimeout: time.Second, ReadTimeout: 2 * time.Second},
		Health:   shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 2, Timeout: 300 * time.Millisecond},
		Shards:   []ring.Shard{{Name: "s0", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Shards: []shard.SentinelShard{{Name: "s0", MasterName: set.Names()[0]}}},
	}
	tel := instrumented(t, cfg)
	ctx := context.Background()
	require.NoError(t, master.Kill())

	var promoted []map[string]string
	deadline := time.Now().Add(60 * time.Second)
	for len(promoted) == 0 {
		require.False(t, time.Now().After(deadline), "no node event %q counted within 60s", shard.ReplicaPromoted.String())
		time.Sleep(50 * time.Millisecond)
		var rm metricdata.ResourceMetrics
		require.NoError(t, tel.reader.Collect(ctx, &rm))
		if find(rm, "shardis.client.node.events") == nil {
			continue
		}
		for _, p := range sumPoints(t, rm, "shardis.client.node.events") {
			if a := attrs(p.Attributes.ToSlice()); a["shardis.node.event"] == shard.ReplicaPromoted.String() {
				promoted = append(promoted, a)
			}
		}
	}
	for _, a := range promoted {
		assert.Equal(t, wantHost, a["server.address"], "%v", a)
		assert.Equal(t, wantPort, a["server.port"], "%v", a)
		assert.Equal(t, "s0", a["shardis.node"], "%v", a)
	}
}
