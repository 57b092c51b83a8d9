package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Both topologies of a migration are reached with the client's pool
// options, its database included. A From (or a run-time new topology)
// naming another database had it ignored: the migration scanned and
// moved the client's database, not the one the old topology's data was
// in. Such a config is refused as a bad one; the client's own database,
// repeated, is accepted.
func TestReview7MigrationRefusesADatabaseItWouldIgnore(t *testing.T) {
	ctx := context.Background()
	oldSrv := redistest.StartTB(t, redistest.Options{})
	newSrv := redistest.StartTB(t, redistest.Options{})
	cases := []struct {
		name         string
		fromDB, db   int
		wantRefusals bool
	}{
		{name: "From on db 2, client on 0", fromDB: 2, wantRefusals: true},
		{name: "From on db 1, client on 3", fromDB: 1, db: 3, wantRefusals: true},
		{name: "the client's own", fromDB: 3, db: 3},
		{name: "none given", db: 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			from := ringConfig([]*redistest.Server{oldSrv})
			from.Pool.DB = tc.fromDB
			cfg := ringConfig([]*redistest.Server{newSrv})
			cfg.Shards[0].Name = "new-0"
			cfg.Pool.DB = tc.db
			cfg.Migration = &shard.Migration{From: &from}
			err := cfg.Validate()
			if !tc.wantRefusals {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, shard.ErrBadConfig) {
				t.Fatalf("Validate: %v, want ErrBadConfig", err)
			}
			c, err := shard.New(ctx, cfg)
			if err == nil {
				c.Close()
			}
			if !errors.Is(err, shard.ErrBadConfig) {
				t.Fatalf("New: %v, want ErrBadConfig", err)
			}
		})
	}
	t.Run("StartMigration", func(t *testing.T) {
		c := newClient(t, ringConfig([]*redistest.Server{newSrv}))
		to := ringConfig([]*redistest.Server{newSrv, oldSrv})
		to.Pool.DB = 2
		if err := c.StartMigration(ctx, to); !errors.Is(err, shard.ErrBadConfig) {
			t.Fatalf("StartMigration: %v, want ErrBadConfig", err)
		}
		if _, on := c.Migration(); on {
			t.Fatal("a refused migration is on")
		}
	})
}
