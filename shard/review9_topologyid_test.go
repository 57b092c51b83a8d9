package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// yearsRouter keeps 2020 on the archive node and, once moved21 is set,
// 2021 too; every other key on the recent node. Both placements use the
// same two nodes.
type yearsRouter struct {
	recent, archive shard.Node
	moved21         bool
}

func (r yearsRouter) Route(key string) (shard.Node, error) {
	if strings.HasPrefix(key, "y2020:") || r.moved21 && strings.HasPrefix(key, "y2021:") {
		return r.archive, nil
	}
	return r.recent, nil
}

func (r yearsRouter) Nodes() []shard.Node { return []shard.Node{r.recent, r.archive} }

// namedYearsRouter names its placement (TopologyIDer).
type namedYearsRouter struct{ yearsRouter }

func (r namedYearsRouter) TopologyID() string {
	if r.moved21 {
		return "years-v2"
	}
	return "years-v1"
}

// TestReview9MigrationRefusesTwoTopologiesWithOneID: a Router without
// TopologyIDer is named after its nodes' addresses, so moving 2021 from
// one node to another that both placements use gave both sides one
// TopologyID. The migration then could not be told from its reverse: its
// fence's marker and beacons were those of the rollback (which found the
// marker armed at once on the same nodes and moved keys back while other
// processes still moved them forward), and the mover took its own
// connections for a mover of the opposite migration and refused to run.
// Such a migration is refused up front, naming TopologyIDer; a Router that
// names its placements migrates.
func TestReview9MigrationRefusesTwoTopologiesWithOneID(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	base := ringConfig(servers[:1])
	recent := shard.Node{Name: "recent", Addr: servers[0].Addr}
	archive := shard.Node{Name: "archive", Addr: servers[1].Addr}
	v1 := yearsRouter{recent: recent, archive: archive}
	v2 := yearsRouter{recent: recent, archive: archive, moved21: true}
	from := shard.Config{Router: v1, Pool: base.Pool, Health: base.Health}
	to := shard.Config{Router: v2, Pool: base.Pool, Health: base.Health}
	require.Equal(t, shard.TopologyID(from), shard.TopologyID(to), "the premise: one ID for both")

	t.Run("Config.Migration", func(t *testing.T) {
		cfg := to
		f := from
		cfg.Migration = &shard.Migration{From: &f}
		_, err := shard.New(ctx, cfg)
		require.Error(t, err)
		assert.ErrorIs(t, err, shard.ErrBadConfig)
		assert.Contains(t, err.Error(), "TopologyIDer")
		assert.True(t, strings.HasPrefix(err.Error(), "shardis: "), err.Error())
	})
	t.Run("StartMigration", func(t *testing.T) {
		c := newClient(t, from)
		err := c.StartMigration(ctx, to)
		require.Error(t, err)
		assert.ErrorIs(t, err, shard.ErrMigration)
		assert.ErrorIs(t, err, shard.ErrBadConfig)
		assert.Contains(t, err.Error(), "TopologyIDer")
		_, on := c.Migration()
		assert.False(t, on, "nothing changed")
	})
	t.Run("named placements migrate", func(t *testing.T) {
		_, err := servers[0].Do("SET", "y2021:a", "v")
		require.NoError(t, err)
		nfrom := shard.Config{Router: namedYearsRouter{v1}, Pool: base.Pool, Health: base.Health}
		nto := shard.Config{Router: namedYearsRouter{v2}, Pool: base.Pool, Health: base.Health}
		c := newClient(t, nfrom)
		require.NoError(t, c.StartMigration(ctx, nto))
		require.NoError(t, c.ArmMigration())
		v, err := redis.String(c.Do(ctx, "GETEX", "y2021:a")) // a write: moves it
		require.NoError(t, err)
		assert.Equal(t, "v", v)
		n, err := servers[1].Do("EXISTS", "y2021:a")
		require.NoError(t, err)
		assert.Equal(t, "1", n, "y2021:a moved to the archive node")
	})
}
