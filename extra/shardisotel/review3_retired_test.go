package shardisotel_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// upNodes collects shardis.client.node.up by host:port. It does not fail
// the test, so that conditions can call it.
func upNodes(reader *sdkmetric.ManualReader) map[string]int64 {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		return nil
	}
	out := map[string]int64{}
	m := find(rm, "shardis.client.node.up")
	if m == nil {
		return out
	}
	g, ok := m.Data.(metricdata.Gauge[int64])
	if !ok {
		return nil
	}
	for _, p := range g.DataPoints {
		a := attrs(p.Attributes.ToSlice())
		out[a["server.address"]+":"+a["server.port"]] = p.Value
	}
	return out
}

// TestReview3NodeUpForgetsAShardThatLeft: as with Prometheus
// (TestNodeUpForgetsAShardThatLeft), a ring shard that a finished
// migration left behind has no shardis.client.node.up series, and the
// shards that stay keep theirs.
func TestReview3NodeUpForgetsAShardThatLeft(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	tel := ringTelemetry(t, servers)
	gone := servers[2]
	assert.Equal(t, map[string]int64{servers[0].Addr: 1, servers[1].Addr: 1, gone.Addr: 1}, upNodes(tel.reader))

	to := shard.Config{Pool: pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second}}
	for i, s := range servers[:2] {
		to.Shards = append(to.Shards, ring.Shard{Name: fmt.Sprintf("new-%d", i), Addr: s.Addr, Weight: 1})
	}
	to.Migration = &shard.Migration{Armed: true}
	if err := tel.c.StartMigration(ctx, to); err != nil {
		t.Fatal(err)
	}
	if err := tel.c.FinishMigration(); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{servers[0].Addr: 1, servers[1].Addr: 1}
	assert.Eventually(t, func() bool { return assert.ObjectsAreEqual(want, upNodes(tel.reader)) }, 20*time.Second, 10*time.Millisecond,
		"node.up series: %v", upNodes(tel.reader))
}
