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
	cfg := shard.Config{
		Pool:     pool.Options{DialTimeout: time.Second, ReadTimeout: 2 * time.Second},
		Health:   shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 2, Timeout: 300 * time.Millisecond},
		Shards:   []ring.Shard{{Name: "s0", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Shards: []shard.SentinelShard{{Name: "s0", MasterName: set.Names()[0]}}},
	}
	tel := instrumented(t, cfg)
	ctx := context.Background()
	require.NoError(t, master.Kill())

	var downs []map[string]string
	deadline := time.Now().Add(30 * time.Second)
	for len(downs) == 0 {
		require.False(t, time.Now().After(deadline), "no node event \"down\" counted within 30s")
		time.Sleep(50 * time.Millisecond)
		var rm metricdata.ResourceMetrics
		require.NoError(t, tel.reader.Collect(ctx, &rm))
		if find(rm, "shardis.client.node.events") == nil {
			continue
		}
		for _, p := range sumPoints(t, rm, "shardis.client.node.events") {
			if a := attrs(p.Attributes.ToSlice()); a["shardis.node.event"] == "down" {
				downs = append(downs, a)
			}
		}
	}
	for _, a := range downs {
		assert.Equal(t, wantHost, a["server.address"], "%v", a)
		assert.Equal(t, wantPort, a["server.port"], "%v", a)
		assert.Equal(t, "s0", a["shardis.node"], "%v", a)
	}
}
