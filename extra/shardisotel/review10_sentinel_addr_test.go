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

// TestReview10SentinelShardServerAddress: a Sentinel shard's node is
// named after the shard ("sentinel/<name>"), not after a server. Its
// spans and measurements gave server.address "sentinel/<name>" and
// server.port 0, where OpenTelemetry's conventions ask for the server's
// host and port: they give its master's, and name the shard in
// shardis.node (NodeKey).
func TestReview10SentinelShardServerAddress(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Replicas: 0, Sentinels: 1})
	master, err := set.Master(0)
	require.NoError(t, err)
	wantHost, wantPort := hostPort(t, master.Addr)
	cfg := shard.Config{
		Pool:     pool.Options{DialTimeout: time.Second, ReadTimeout: 2 * time.Second},
		Health:   shard.HealthOptions{Interval: -1},
		Shards:   []ring.Shard{{Name: "s0", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Shards: []shard.SentinelShard{{Name: "s0", MasterName: set.Names()[0]}}},
	}
	tel := instrumented(t, cfg)
	ctx := context.Background()
	_, err = tel.c.Do(ctx, "SET", "r10sa", "v")
	require.NoError(t, err)
	p := tel.c.Pipeline()
	p.Send("GET", "r10sa")
	p.Send("GET", "r10sa")
	_, err = p.Exec(ctx)
	require.NoError(t, err)

	checked := 0
	for _, s := range tel.spans.Ended() {
		a := attrs(s.Attributes())
		if _, ok := a["server.address"]; !ok {
			continue
		}
		checked++
		assert.Equal(t, wantHost, a["server.address"], "span %s", s.Name())
		assert.Equal(t, wantPort, a["server.port"], "span %s", s.Name())
		assert.Equal(t, "s0", a["shardis.node"], "span %s", s.Name())
	}
	assert.GreaterOrEqual(t, checked, 2, "the SET's span and the pipeline part's")

	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(ctx, &rm))
	points := histPoints(t, rm, "db.client.operation.duration")
	require.NotEmpty(t, points)
	for _, pt := range points {
		a := attrs(pt.Attributes.ToSlice())
		assert.Equal(t, wantHost, a["server.address"], "%v", a)
		assert.Equal(t, wantPort, a["server.port"], "%v", a)
		assert.Equal(t, "s0", a["shardis.node"], "%v", a)
	}
	ups := gaugeInts(t, rm, "shardis.client.node.up")
	require.NotEmpty(t, ups)
	for _, pt := range ups {
		a := attrs(pt.Attributes.ToSlice())
		assert.Equal(t, wantHost, a["server.address"], "node.up %v", a)
		assert.Equal(t, wantPort, a["server.port"], "node.up %v", a)
	}
}

func gaugeInts(t *testing.T, rm metricdata.ResourceMetrics, name string) []metricdata.DataPoint[int64] {
	t.Helper()
	m := find(rm, name)
	require.NotNil(t, m, "metric %s", name)
	g, ok := m.Data.(metricdata.Gauge[int64])
	require.True(t, ok, "metric %s is %T", name, m.Data)
	return g.DataPoints
}
