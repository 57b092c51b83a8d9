package shardisotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// sentinelPoints collects tel and returns the value of each
// shardis.client.sentinel.* point by "metric shardis.node". It does not
// fail the test, so that conditions can call it.
func sentinelPoints(tel *telemetry) (map[string]int64, error) {
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, name := range []string{"shardis.client.sentinel.failovers", "shardis.client.sentinel.stale", "shardis.client.sentinel.subscribed"} {
		m := find(rm, name)
		if m == nil {
			continue
		}
		var points []metricdata.DataPoint[int64]
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			points = d.DataPoints
		case metricdata.Gauge[int64]:
			points = d.DataPoints
		}
		for _, p := range points {
			a := attrs(p.Attributes.ToSlice())
			out[name+" "+a["shardis.node"]] = p.Value
		}
	}
	return out, nil
}

// TestReview21SentinelShardLinksObserved: whether a Sentinel shard's
// view of its master is stale, how many Sentinels tell the client of
// failovers, and the failovers it followed were in shard.Stats but not
// observed: a client no Sentinel could reach looked healthy until the
// next failover.
func TestReview21SentinelShardLinksObserved(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Replicas: 1, Sentinels: 1,
		DownAfter: time.Second, FailoverTimeout: 2 * time.Second})
	master, err := set.Master(0)
	require.NoError(t, err)
	tel := instrumented(t, sentinelShardConfig(set))
	require.Eventually(t, func() bool {
		v, err := sentinelPoints(tel)
		return err == nil && v["shardis.client.sentinel.subscribed s0"] == 1
	}, 30*time.Second, 20*time.Millisecond, "the client never subscribed to the Sentinel")
	v, err := sentinelPoints(tel)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{
		"shardis.client.sentinel.failovers s0":  0,
		"shardis.client.sentinel.stale s0":      0,
		"shardis.client.sentinel.subscribed s0": 1,
	}, v)

	require.NoError(t, master.Kill())
	require.Eventually(t, func() bool {
		v, err := sentinelPoints(tel)
		return err == nil && v["shardis.client.sentinel.failovers s0"] == 1
	}, 60*time.Second, 50*time.Millisecond, "the failover was not counted")
}
