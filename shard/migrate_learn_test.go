package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command learned at run time (here INCRBY renamed ADDBY, which the
// table cannot know) moves its keys during a migration like a table
// command: learning happens before the batch is planned, so the MIGRATE
// step sees its key positions.
func TestMigrationMovesTheKeysOfLearnedCommands(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{Args: []string{"--rename-command", "INCRBY", "ADDBY"}})
	from, to := ringConfig(servers), ringConfig(servers[:3])
	fromRing, err := ring.New(from.RingConfig())
	require.NoError(t, err)
	toRing, err := ring.New(to.RingConfig())
	require.NoError(t, err)
	var moving []string
	for i := 0; len(moving) < 10; i++ {
		require.Less(t, i, 10000, "no moving keys found")
		k := fmt.Sprintf("learnmig:%d", i)
		if fromRing.Shards()[fromRing.Locate(k)].Addr != toRing.Shards()[toRing.Locate(k)].Addr {
			moving = append(moving, k)
		}
	}
	for _, k := range moving {
		_, err := servers[3].Do("SET", k, "10")
		require.NoError(t, err)
	}
	cfg := to
	cfg.Migration = &shard.Migration{From: &from, Armed: true}
	c := newClient(t, cfg)
	for _, k := range moving {
		v, err := redis.Int(c.Do(ctx, "ADDBY", k, 5))
		require.NoError(t, err, k)
		assert.Equal(t, 15, v, "%s: ADDBY saw the moved value", k)
		assert.Equal(t, []string{toRing.Shards()[toRing.Locate(k)].Addr}, holders(t, servers, k))
	}
}
