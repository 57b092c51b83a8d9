package shardisotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// sentinelShardConfig returns the config of a client with one shard, s0,
// whose master the Sentinels of set name as their first master, with
// health checks quick to mark a dead master down.
func sentinelShardConfig(set *redistest.SentinelSet) shard.Config {
	return shard.Config{
		Pool:     pool.Options{DialTimeout: time.Second, ReadTimeout: 2 * time.Second},
		Health:   shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 2, Timeout: 300 * time.Millisecond},
		Shards:   []ring.Shard{{Name: "s0", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Shards: []shard.SentinelShard{{Name: "s0", MasterName: set.Names()[0]}}},
	}
}

// countedNodeEvents waits up to within for tel to have counted node
// events (shardis.client.node.events) of the kind event, and returns the
// attributes of each such count: none if time ran out first.
func countedNodeEvents(t *testing.T, tel *telemetry, event string, within time.Duration) []map[string]string {
	t.Helper()
	ctx := context.Background()
	var counted []map[string]string
	deadline := time.Now().Add(within)
	for len(counted) == 0 && !time.Now().After(deadline) {
		time.Sleep(50 * time.Millisecond)
		var rm metricdata.ResourceMetrics
		require.NoError(t, tel.reader.Collect(ctx, &rm))
		if find(rm, "shardis.client.node.events") == nil {
			continue
		}
		for _, p := range sumPoints(t, rm, "shardis.client.node.events") {
			if a := attrs(p.Attributes.ToSlice()); a["shardis.node.event"] == event {
				counted = append(counted, a)
			}
		}
	}
	return counted
}
