package shard_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// One server named by two spellings (127.0.0.1:P in the old topology,
// localhost:P in the new one) is not two nodes: its keys would "move" to
// the server they are on, and a MIGRATE to the server it runs on holds
// that server until its timeout. The mover refuses such a pair of
// topologies (reshard/servers.go); the client must too, when the migration
// is installed (New with Config.Migration, armed or not, and
// StartMigration), with an error that matches ErrMigration and
// ErrBadConfig and names both spellings. A client refused at
// StartMigration keeps routing by its old topology.
func TestReview7MigrationRefusesOneServerUnderTwoAddresses(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := ringConfig(servers)
	to := ringConfig(servers)
	_, port, err := net.SplitHostPort(servers[0].Addr)
	require.NoError(t, err)
	alias := net.JoinHostPort("localhost", port)
	to.Shards[0].Addr = alias

	checkErr := func(t *testing.T, err error) {
		t.Helper()
		require.Error(t, err, "one server under two addresses was accepted")
		require.ErrorIs(t, err, shard.ErrMigration)
		require.ErrorIs(t, err, shard.ErrBadConfig)
		require.Contains(t, err.Error(), alias)
		require.Contains(t, err.Error(), servers[0].Addr)
	}
	for _, armed := range []bool{false, true} {
		name := "waiting"
		if armed {
			name = "armed"
		}
		t.Run("config/"+name, func(t *testing.T) {
			cfg := to
			f := from
			cfg.Migration = &shard.Migration{From: &f, Armed: armed}
			c, err := shard.New(ctx, cfg)
			if err == nil {
				c.Close()
			}
			checkErr(t, err)
		})
	}
	t.Run("StartMigration", func(t *testing.T) {
		_, err := servers[0].Do("SET", "alias:k", "7")
		require.NoError(t, err)
		_, err = servers[1].Do("SET", "alias:k", "7")
		require.NoError(t, err)
		c := newClient(t, from)
		checkErr(t, c.StartMigration(ctx, to))
		_, ok := c.Migration()
		require.False(t, ok, "a refused migration is on")
		got, err := redis.String(c.Do(ctx, "GET", "alias:k"))
		require.NoError(t, err)
		require.Equal(t, "7", got)
		if err := c.ArmMigration(); !errors.Is(err, shard.ErrMigration) {
			t.Errorf("ArmMigration after a refused StartMigration: %v, want ErrMigration (no migration)", err)
		}
	})
}
