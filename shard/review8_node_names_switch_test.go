package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview8NodeNamesSwitchWithTheRouting: with health checks off (no
// tick renames anything), a node's name in Stats changes exactly when the
// client's routing does: the old names while a migration waits behind its
// fence, the new ones from the switch, the old ones again when a migration
// that was never armed is aborted.
func TestReview8NodeNamesSwitchWithTheRouting(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from, to := ringConfig(servers), ringConfig(servers)
	from.Health, to.Health = shard.HealthOptions{}, shard.HealthOptions{}
	oldNames, newNames := map[string]string{}, map[string]string{}
	for i, s := range servers {
		from.Shards[i].Name = fmt.Sprintf("old-%d", i+1)
		to.Shards[i].Name = fmt.Sprintf("new-%d", i+1)
		oldNames[s.Addr], newNames[s.Addr] = from.Shards[i].Name, to.Shards[i].Name
	}

	c := newClient(t, from)
	require.NoError(t, c.StartMigration(ctx, to))
	assert.Equal(t, oldNames, statsNames(c), "waiting behind the fence: routed by the old ring")
	require.NoError(t, c.AbortMigration(ctx))
	assert.Equal(t, oldNames, statsNames(c), "aborted before arming")

	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	assert.Equal(t, newNames, statsNames(c), "armed: routed by the new ring")
	require.NoError(t, c.FinishMigration())
	assert.Equal(t, newNames, statsNames(c), "finished")
}
