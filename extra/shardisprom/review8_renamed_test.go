package shardisprom_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nameByNode gathers shardis_node_up and returns the name label of each
// node label.
func nameByNode(t *testing.T, reg *prometheus.Registry) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range nodeUpSeries(t, reg) {
		node := s.labels["node"]
		_, dup := out[node]
		assert.False(t, dup, "two shardis_node_up series for %s", node)
		out[node] = s.labels["name"]
	}
	return out
}

// TestReview8NameFollowsTheRingInUse: a migration to a ring that names
// the same servers differently (old-0 becomes new-0) leaves the series
// labelled with the names of the ring the client routes by, not with
// those of the ring it left: before, name kept the old ring's names for
// the life of the client, so a dashboard by shard name showed shards the
// configuration no longer had.
func TestReview8NameFollowsTheRingInUse(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	ringOf := func(prefix string) shard.Config {
		return ringOver(servers, prefix, shard.HealthOptions{Interval: -1})
	}
	c, err := shard.New(ctx, ringOf("old"))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(shardisprom.NewCollector(c, nil))
	assert.Equal(t, map[string]string{servers[0].Addr: "old-0", servers[1].Addr: "old-1"}, nameByNode(t, reg))

	to := ringOf("new")
	to.Migration = &shard.Migration{Armed: true}
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.FinishMigration())
	_, err = c.Do(ctx, "SET", "r8:renamed", "v")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{servers[0].Addr: "new-0", servers[1].Addr: "new-1"}, nameByNode(t, reg))
}
