package reshard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9MoverTakesTheAppsClusterURL: the new topology the processes
// run (docs/resharding.md, ring -> Redis Cluster at run time) may read
// from replicas once the migration ends (read_from=replica-random). The
// mover, given that same URL, refused it as a bad config ("replica reads
// cannot see keys being moved"), though it reads nothing from replicas:
// it routes by masters alone, whatever the topology's read_from says.
func TestReview9MoverTakesTheAppsClusterURL(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from := mustParse(t, ringURL(servers, []string{"s0"}, nil))
	to := mustParse(t, clusterURL(rc)+"&read_from=replica-random")
	const n = 50
	for i := range n {
		_, err := servers[0].Do("SET", fmt.Sprint("rf:", i), "v")
		require.NoError(t, err)
	}
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true})
	require.NoError(t, err)
	assert.EqualValues(t, n, rep.Moved)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	_, err = reshard.Finish(ctx, from, to)
	require.NoError(t, err)
}

// TestReview9MoverTakesTheAppsSentinelConfig: the same for a ring of
// Sentinel shards whose processes read from replicas once the migration
// ends.
func TestReview9MoverTakesTheAppsSentinelConfig(t *testing.T) {
	ctx := context.Background()
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: 1})
	plain := redistest.StartNTB(t, 1, redistest.Options{})[0]
	po := pool.Options{DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second}
	to := shard.Config{Pool: po, Health: shard.HealthOptions{Interval: -1},
		Shards: []ring.Shard{{Name: "s0", Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Timeout: time.Second, ReadFrom: shard.ReadReplicaRandom,
			Shards: []shard.SentinelShard{{Name: "s0", MasterName: set.Shards[0].Name}}}}
	from := shard.Config{Pool: po, Health: shard.HealthOptions{Interval: -1},
		Shards: []ring.Shard{{Name: "old", Addr: plain.Addr, Weight: 1}}}
	_, err := plain.Do("SET", "rf:sent", "v")
	require.NoError(t, err)
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true})
	require.NoError(t, err)
	assert.EqualValues(t, 1, rep.Moved)
}
