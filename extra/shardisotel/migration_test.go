package shardisotel_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// During a migration of a ring from 3 to 4 shards: the MIGRATE a client
// sends is measured at the old owner, and the migration's phase and steps
// are observed with both topologies; no password in any of it.
func TestMigrationMetrics(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{Users: []redistest.User{{Name: user, Password: password}}})
	cfg := func(n int) shard.Config {
		c := shard.Config{Pool: pool.Options{Username: user, Password: password, DialTimeout: time.Second, ReadTimeout: time.Second},
			Health: shard.HealthOptions{Interval: -1}}
		for i, s := range servers[:n] {
			c.Shards = append(c.Shards, ring.Shard{Name: fmt.Sprintf("shard-%d", i), Addr: s.Addr, Weight: 1})
		}
		return c
	}
	from, to := cfg(3), cfg(4)
	rf, err := ring.New(from.RingConfig())
	require.NoError(t, err)
	rt, err := ring.New(to.RingConfig())
	require.NoError(t, err)
	var key, oldAddr string
	for i := 0; key == "" && i < 10000; i++ {
		k := fmt.Sprint("om:", i)
		if o := rf.Shards()[rf.Locate(k)].Addr; o != rt.Shards()[rt.Locate(k)].Addr {
			key, oldAddr = k, o
		}
	}
	require.NotEmpty(t, key)
	for _, s := range servers {
		if s.Addr == oldAddr {
			_, err := s.Do("SET", key, "41", "EX", "100")
			require.NoError(t, err)
		}
	}

	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	f := from
	mcfg := to
	mcfg.Migration = &shard.Migration{From: &f, Armed: true}
	in, err := shardisotel.Instrument(&mcfg, shardisotel.WithMeterProvider(mp), shardisotel.WithStatements(0))
	require.NoError(t, err)
	c, err := shard.New(ctx, mcfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	reg, err := in.Observe(c)
	require.NoError(t, err)
	t.Cleanup(func() { reg.Unregister() })

	n, err := c.Do(ctx, "INCR", key)
	require.NoError(t, err)
	require.Equal(t, int64(42), n)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	ops := map[string]uint64{}
	for _, p := range histPoints(t, rm, "db.client.operation.duration") {
		a := attrs(p.Attributes.ToSlice())
		ops[a["server.address"]+":"+a["server.port"]+" "+a["db.operation.name"]] += p.Count
	}
	assert.Equal(t, uint64(1), ops[oldAddr+" MIGRATE"], "the move, at the old owner: %v", ops)
	assert.Equal(t, uint64(1), ops[rt.Shards()[rt.Locate(key)].Addr+" INCR"], "the command, at the new owner: %v", ops)

	phase := sumPoints(t, rm, "shardis.client.migration.phase")
	require.Len(t, phase, 1)
	a := attrs(phase[0].Attributes.ToSlice())
	assert.Equal(t, shard.TopologyID(from), a["shardis.migration.from"])
	assert.Equal(t, shard.TopologyID(to), a["shardis.migration.to"])
	assert.Equal(t, int64(shard.PhaseArmed), phase[0].Value)
	steps := map[string]int64{}
	for _, p := range sumPoints(t, rm, "shardis.client.migration.steps") {
		steps[attrs(p.Attributes.ToSlice())["shardis.migration.step"]] = p.Value
	}
	assert.Equal(t, map[string]int64{"move": 1, "overwrite": 0, "old_read": 0, "busy_key": 0, "failure": 0}, steps)
	dump, err := json.Marshal(rm)
	require.NoError(t, err)
	assert.Contains(t, string(dump), "shardis.migration.step", "the dump holds the attributes")
	assert.NotContains(t, string(dump), password)
}
