package shardisotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestReview3DialTimeoutIsATimeout: a dial that timed out (here the
// server accepts the connection but, stopped, never answers the AUTH the
// dial sends) is error.type=timeout in db.client.connection.create_time,
// as the docs say, not dial: a timing-out node must be told from a
// refused one.
func TestReview3DialTimeoutIsATimeout(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{Users: []redistest.User{{Name: user, Password: password}}})
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	cfg := shard.Config{
		Shards: []ring.Shard{{Name: "s", Addr: s.Addr, Weight: 1}},
		Pool:   pool.Options{Username: user, Password: password, DialTimeout: 300 * time.Millisecond, ReadTimeout: 300 * time.Millisecond},
	}
	cfg.Health.Interval = -1
	_, err := shardisotel.Instrument(&cfg, shardisotel.WithMeterProvider(mp))
	require.NoError(t, err)
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })

	require.NoError(t, s.Pause())
	defer func() { require.NoError(t, s.Resume()) }()
	_, err = c.Do(context.Background(), "GET", "r3dial")
	require.Error(t, err)
	t.Logf("the command's error: %v", err)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	types := map[string]uint64{}
	for _, p := range histPoints(t, rm, "db.client.connection.create_time") {
		types[attrs(p.Attributes.ToSlice())["error.type"]] += p.Count
	}
	assert.Positive(t, types["timeout"], "dials by error.type: %v", types)
	assert.Zero(t, types["dial"], "dials by error.type: %v", types)
}
