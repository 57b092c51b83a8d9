package shardisotel

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
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// cached reports whether the Instrumentation still holds attributes of
// the node at addr.
func (in *Instrumentation) cached(addr string) bool {
	_, found := in.nodes.Load(addr)
	in.opAttrs.Range(func(k, _ any) bool {
		found = found || k.(opKey).addr == addr
		return true
	})
	return found
}

// TestReview3RetiredNodesAreForgotten: the attributes cached for a node
// (its server.address/server.port, its duration measurements' attribute
// sets) go when the client retires it (shard.NodeRetired). Before, every
// node ever seen stayed cached for the life of the process: a deployment
// whose nodes come back at new addresses grew the caches without bound
// and, once the duration cache was full, paid an attribute set per
// measurement.
func TestReview3RetiredNodesAreForgotten(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	t.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	ringOf := func(servers []*redistest.Server) shard.Config {
		cfg := shard.Config{Pool: pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second}}
		cfg.Health.Interval = -1
		for i, s := range servers {
			cfg.Shards = append(cfg.Shards, ring.Shard{Name: fmt.Sprintf("shard-%d", i), Addr: s.Addr, Weight: 1})
		}
		return cfg
	}
	cfg := ringOf(servers)
	in, err := Instrument(&cfg, WithTracerProvider(tp), WithMeterProvider(mp))
	require.NoError(t, err)
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	gone := servers[2]
	for i := 0; !in.cached(gone.Addr) || !in.cached(servers[0].Addr); i++ {
		require.Less(t, i, 10000, "no key on %s or %s", gone.Addr, servers[0].Addr)
		_, err := c.Do(ctx, "SET", fmt.Sprintf("r3forget:%d", i), "v")
		require.NoError(t, err)
	}

	to := ringOf(servers[:2])
	to.Migration = &shard.Migration{Armed: true}
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.FinishMigration())
	assert.Eventually(t, func() bool { return !in.cached(gone.Addr) }, 20*time.Second, 10*time.Millisecond,
		"the attributes of %s are still cached", gone.Addr)
	assert.True(t, in.cached(servers[0].Addr), "the shards that stay keep theirs")
}
