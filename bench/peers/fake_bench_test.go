package peers

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// The client-bound benchmarks run the workloads against fakeredis
// processes (bench/fakeredis), which answer from pre-encoded replies and
// spend a fraction of redis-server's CPU per command, so that the
// client's own cost decides the throughput even on two cores.

// newShardisRingAt returns a shardis ring client over addrs, named as
// newShardis names real servers, default options.
func newShardisRingAt(tb testing.TB, addrs []string) *shard.Client {
	tb.Helper()
	var shards []ring.Shard
	for i, a := range addrs {
		shards = append(shards, ring.Shard{Name: shardName(i), Addr: a, Weight: 1})
	}
	c, err := shard.New(context.Background(), shard.Config{Shards: shards})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// newGoRedisRingAt returns a go-redis Ring over addrs, default options.
func newGoRedisRingAt(tb testing.TB, addrs []string) *redis.Ring {
	tb.Helper()
	m := map[string]string{}
	for i, a := range addrs {
		m[shardName(i)] = a
	}
	r := redis.NewRing(&redis.RingOptions{Addrs: m})
	tb.Cleanup(func() { r.Close() })
	return r
}

func noFlush() error { return nil }

// BenchmarkFakeRing is BenchmarkSteadyRing against three fakeredis
// processes.
func BenchmarkFakeRing(b *testing.B) {
	addrs := startFakes(b, 3, false)
	f := NewFloor(addrs, 0)
	b.Cleanup(func() { f.Close() })
	runSteady(b, "fakeredis", noFlush, nil, randomKeys(steadyKeys), []steadyClient{
		shardisSteady("shardis-ring", newShardisRingAt(b, addrs)),
		floorSteady(f),
		goRedisSteady("goredis-ring", newGoRedisRingAt(b, addrs)),
	})
}

// BenchmarkFakeCluster is BenchmarkSteadyCluster against three fakeredis
// processes that present themselves as the masters of a cluster.
func BenchmarkFakeCluster(b *testing.B) {
	addrs := startFakes(b, 3, true)
	runSteady(b, "fakeredis", noFlush, nil, randomKeys(steadyKeys), []steadyClient{
		shardisSteady("shardis-cluster", newShardisCluster(b, addrs)),
		goRedisSteady("goredis-cluster", newGoRedisCluster(b, addrs)),
		rueidisSteady(newRueidis(b, addrs)),
	})
}

// BenchmarkFakeSingle is BenchmarkClusterSingle against three fakeredis
// cluster nodes: 64 goroutines, each sending 200 single commands one at a
// time (SET and GET in turn). One op is one command.
func BenchmarkFakeSingle(b *testing.B) {
	addrs := startFakes(b, 3, true)
	ctx := context.Background()
	keys := bench.Keys("single", workers*perWorker/2)
	name := func(client string) string { return fmt.Sprintf("%s/goroutines=%d", client, workers) }
	run := func(do single) func() error {
		return func() error { return concurrent(ctx, keys, value, workers, perWorker, do) }
	}
	runCasesFor(b, "fakeredis", workers*perWorker, []peerCase{
		{name("shardis-cluster"), run(shardisSingle(newShardisCluster(b, addrs)))},
		{name("goredis-cluster"), run(goRedisSingle(newGoRedisCluster(b, addrs)))},
		{name("rueidis"), run(rueidisSingle(newRueidis(b, addrs)))},
	})
}
