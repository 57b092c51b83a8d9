package peers

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/shardis/shardis/shard"
)

// newShardisCluster returns a shardis client in cluster mode, default
// options, discovering the cluster from seeds.
func newShardisCluster(tb testing.TB, seeds []string) *shard.Client {
	tb.Helper()
	return newShardisClusterConfig(tb, shard.Config{Mode: shard.ModeCluster, Seeds: seeds})
}

// newShardisClusterPooled is newShardisCluster without automatic
// pipelining: every single command on a pooled connection of its own.
func newShardisClusterPooled(tb testing.TB, seeds []string) *shard.Client {
	tb.Helper()
	return newShardisClusterConfig(tb, shard.Config{Mode: shard.ModeCluster, Seeds: seeds, DisableAutoPipeline: true})
}

func newShardisClusterConfig(tb testing.TB, cfg shard.Config) *shard.Client {
	tb.Helper()
	c, err := shard.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// newGoRedisCluster returns a go-redis v9 ClusterClient with default
// options (a pool of 5 connections per node and GOMAXPROCS).
func newGoRedisCluster(tb testing.TB, seeds []string) *redis.ClusterClient {
	tb.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds})
	tb.Cleanup(func() { c.Close() })
	return c
}

// newRueidis returns a rueidis client with default options; given the
// seeds of a cluster it becomes a cluster client (one shared, automatically
// pipelined connection per node).
func newRueidis(tb testing.TB, seeds []string) rueidis.Client {
	tb.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: seeds})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}
