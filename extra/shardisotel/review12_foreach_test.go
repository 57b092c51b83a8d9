package shardisotel_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestReview12ForEachShardHasASpanPerNode: a ForEachShard that sent
// DBSIZE to every master made no span and no duration measurement: the
// client did not report a ForEachShard function's commands to its hooks.
// Each command now has its span naming the node it went to, and its
// measurement in the node's series.
func TestReview12ForEachShardHasASpanPerNode(t *testing.T) {
	rc := clusterForTest(t)
	tel := newTelemetry(t, rc)
	ctx := context.Background()
	masters := rc.Masters()
	require.Len(t, masters, 3)
	tel.spans.Reset()
	err := tel.c.ForEachShard(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
		_, err := redis.Int(conn.Do("DBSIZE"))
		return err
	})
	require.NoError(t, err)
	ended := tel.spans.Ended()
	require.Len(t, ended, len(masters), "a span per node")
	seen := map[string]bool{}
	for _, s := range ended {
		assert.Equal(t, "DBSIZE", s.Name())
		a := attrs(s.Attributes())
		assert.Equal(t, "DBSIZE", a["db.operation.name"])
		seen[a["server.address"]+":"+a["server.port"]] = true
	}
	for _, m := range masters {
		assert.True(t, seen[m.Addr], "a span for %s", m.Addr)
	}

	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(ctx, &rm))
	measured := map[string]bool{}
	for _, p := range histPoints(t, rm, "db.client.operation.duration") {
		a := attrs(p.Attributes.ToSlice())
		if a["db.operation.name"] == "DBSIZE" && p.Count > 0 {
			measured[a["server.address"]+":"+a["server.port"]] = true
		}
	}
	for _, m := range masters {
		assert.True(t, measured[m.Addr], "a DBSIZE duration for %s", m.Addr)
	}
}
