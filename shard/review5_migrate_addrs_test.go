package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// StartMigration checks to.Migration.Addrs as Config.Validate does: an
// address MIGRATE cannot use is a bad config, not a migration that starts
// and then sends every move to a host with the default port.
func TestStartMigrationRefusesBadMigrationAddrs(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	c := newClient(t, from)

	bad := to
	bad.Migration = &shard.Migration{Addrs: map[string]string{servers[3].Addr: "no port here"}}
	err := c.StartMigration(ctx, bad)
	require.Error(t, err)
	require.True(t, errors.Is(err, shard.ErrBadConfig), "error %v is not ErrBadConfig", err)
	_, on := c.Migration()
	require.False(t, on, "a refused StartMigration left a migration on")

	// The same Addrs in a Config are refused the same way.
	bad.Migration.From = &from
	require.ErrorIs(t, bad.Validate(), shard.ErrBadConfig)

	// A good address still starts the migration.
	good := to
	good.Migration = &shard.Migration{Addrs: map[string]string{servers[3].Addr: servers[3].Addr}}
	require.NoError(t, c.StartMigration(ctx, good))
	_, on = c.Migration()
	require.True(t, on)
}
