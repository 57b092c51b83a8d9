package shardisotel_test

import (
	"context"
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
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestReview20MigrationNamesTheOwnerThatAnswered: during a migration of a
// ring from 3 to 4 shards, a read of a key still at its old owner is
// answered there, and its span and measurements name the old owner with
// its name; a write of such a key moves it and is answered by the new
// owner, which its span names, while the MIGRATE is measured at the old.
func TestReview20MigrationNamesTheOwnerThatAnswered(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	cfg := func(n int) shard.Config {
		c := shard.Config{Pool: pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second}, Health: shard.HealthOptions{Interval: -1}}
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
	var keys []string
	var olds, news []ring.Shard
	for i := 0; len(keys) < 2 && i < 10000; i++ {
		k := fmt.Sprint("r20m:", i)
		if o, n := rf.Shards()[rf.Locate(k)], rt.Shards()[rt.Locate(k)]; o.Addr != n.Addr {
			keys, olds, news = append(keys, k), append(olds, o), append(news, n)
		}
	}
	require.Len(t, keys, 2)
	for i, k := range keys {
		for _, s := range servers {
			if s.Addr == olds[i].Addr {
				_, err := s.Do("SET", k, "41")
				require.NoError(t, err)
			}
		}
	}
	f := from
	mcfg := to
	mcfg.Migration = &shard.Migration{From: &f, Armed: true}
	tel := instrumented(t, mcfg, shardisotel.WithStatements(0))

	check := func(what string, sh ring.Shard) {
		t.Helper()
		ended := tel.spans.Ended()
		require.NotEmpty(t, ended, what)
		root := ended[len(ended)-1]
		a := attrs(root.Attributes())
		host, port := hostPort(t, sh.Addr)
		assert.Equal(t, host+":"+port, a["server.address"]+":"+a["server.port"], "%s: %s %v", what, root.Name(), a)
		assert.Equal(t, sh.Name, a["shardis.node"], "%s: %v", what, a)
	}
	tel.spans.Reset()
	v, err := tel.c.Do(ctx, "GET", keys[0])
	require.NoError(t, err)
	require.Equal(t, []byte("41"), v)
	check("a read at the old owner", olds[0])

	tel.spans.Reset()
	n, err := tel.c.Do(ctx, "INCR", keys[1])
	require.NoError(t, err)
	require.Equal(t, int64(42), n)
	check("a write moved to the new owner", news[1])

	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(ctx, &rm))
	ops := map[string]uint64{}
	for _, p := range histPoints(t, rm, "db.client.operation.duration") {
		a := attrs(p.Attributes.ToSlice())
		ops[a["shardis.node"]+" "+a["server.address"]+":"+a["server.port"]+" "+a["db.operation.name"]] += p.Count
	}
	assert.Equal(t, uint64(1), ops[olds[1].Name+" "+olds[1].Addr+" MIGRATE"], "%v", ops)
	assert.Equal(t, uint64(1), ops[news[1].Name+" "+news[1].Addr+" INCR"], "%v", ops)
	assert.NotZero(t, ops[olds[0].Name+" "+olds[0].Addr+" GET"], "the read, at its old owner: %v", ops)
}
