package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// Every error of StartMigration matches ErrMigration, as its doc
// promises, and keeps its own cause: a new topology that is not a valid
// config is refused as ErrBadConfig too, and a closed client as
// ErrClosed, with the cause's text unchanged.
func TestReview9StartMigrationErrorsMatchErrMigration(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	ctx := context.Background()
	good := ringConfig(servers)
	tests := []struct {
		name  string
		to    func() shard.Config
		cause error
	}{
		{"a shard without an address", func() shard.Config {
			to := ringConfig(servers)
			to.Shards = append(to.Shards, ring.Shard{Name: "shard-x", Weight: 1})
			return to
		}, shard.ErrBadConfig},
		{"a negative weight", func() shard.Config {
			to := ringConfig(servers)
			to.Shards[1].Weight = -1
			return to
		}, shard.ErrBadConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, ringConfig(servers[:1]))
			err := c.StartMigration(ctx, tt.to())
			require.Error(t, err)
			require.True(t, errors.Is(err, shard.ErrMigration), "not ErrMigration: %v", err)
			require.True(t, errors.Is(err, tt.cause), "lost its cause: %v", err)
			require.NotContains(t, err.Error(), "migration: shardis:", "the text was prefixed: %v", err)
		})
	}
	t.Run("closed client", func(t *testing.T) {
		c, err := shard.New(ctx, ringConfig(servers[:1]))
		require.NoError(t, err)
		require.NoError(t, c.Close())
		err = c.StartMigration(ctx, good)
		require.True(t, errors.Is(err, shard.ErrMigration), "not ErrMigration: %v", err)
		require.True(t, errors.Is(err, shard.ErrClosed), "lost its cause: %v", err)
	})
}
