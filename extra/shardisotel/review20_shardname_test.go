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
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestReview20RingShardIsNamed: in a ring whose shards have names of
// their own, the span of a command, its duration's measurement and the
// node gauges of Observe name the shard that served it (shardis.node),
// beside its server.address and server.port, as the ring places the key.
func TestReview20RingShardIsNamed(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := shard.Config{Pool: pool.Options{DialTimeout: time.Second}, Health: shard.HealthOptions{Interval: -1}}
	byAddr := map[string]string{}
	for i, s := range servers {
		name := fmt.Sprintf("shard-%c", 'a'+i)
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: name, Addr: s.Addr, Weight: 1})
		byAddr[s.Addr] = name
	}
	r, err := ring.New(cfg.RingConfig())
	require.NoError(t, err)
	tel := instrumented(t, cfg)
	ctx := context.Background()
	seen := map[string]bool{}
	for i := 0; len(seen) < 2 && i < 1000; i++ {
		key := fmt.Sprint("r20n:", i)
		want := r.Shards()[r.Locate(key)]
		if seen[want.Name] {
			continue
		}
		seen[want.Name] = true
		tel.spans.Reset()
		_, err := tel.c.Do(ctx, "SET", key, "v")
		require.NoError(t, err)
		ended := tel.spans.Ended()
		require.Len(t, ended, 1)
		a := attrs(ended[0].Attributes())
		host, port := hostPort(t, want.Addr)
		assert.Equal(t, host+":"+port, a["server.address"]+":"+a["server.port"], key)
		assert.Equal(t, want.Name, a["shardis.node"], "span of %s", key)
	}
	require.Len(t, seen, 2)

	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(ctx, &rm))
	points := 0
	for _, p := range histPoints(t, rm, "db.client.operation.duration") {
		a := attrs(p.Attributes.ToSlice())
		assert.Equal(t, byAddr[a["server.address"]+":"+a["server.port"]], a["shardis.node"], "%v", a)
		points++
	}
	assert.Equal(t, 2, points, "a SET series per shard")
	up := gaugeInts(t, rm, "shardis.client.node.up")
	require.Len(t, up, 2)
	for _, p := range up {
		a := attrs(p.Attributes.ToSlice())
		assert.Equal(t, byAddr[a["server.address"]+":"+a["server.port"]], a["shardis.node"], "%v", a)
	}
}
