package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// The program's Router is guarded when it is the client's own (a panic
// of its Route is the command's *PanicError), but not when it is a
// migration's old topology (Config.Migration.From) or the new one
// (StartMigration): its panic went up through Do, out of the client's
// bookkeeping, and crashed the program.
func TestReview7MigrationRoutersPanicIsTheCommandsError(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cases := []struct {
		name  string
		start func(t *testing.T) *shard.Client
	}{
		{"Migration.From", func(t *testing.T) *shard.Client {
			cfg := ringConfig(servers[2:])
			cfg.Shards[0].Name = "new-0"
			cfg.Migration = &shard.Migration{From: &shard.Config{Router: newPanicRouter(servers[:2])}}
			return newClient(t, cfg)
		}},
		{"StartMigration", func(t *testing.T) *shard.Client {
			c := newClient(t, ringConfig(servers[2:]))
			// Armed: the new topology routes at once.
			to := shard.Config{Router: newPanicRouter(servers[:2]), Migration: &shard.Migration{Armed: true}}
			if err := c.StartMigration(ctx, to); err != nil {
				t.Fatal(err)
			}
			return c
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.start(t)
			err := func() (err error) {
				defer func() {
					if v := recover(); v != nil {
						t.Fatalf("Do panicked: %v", v)
					}
				}()
				_, err = c.Do(ctx, "SET", "boom:1", "v")
				return err
			}()
			var pe *shard.PanicError
			if !errors.As(err, &pe) {
				t.Fatalf("Do gave %v, want a *PanicError", err)
			}
			if _, err := c.Do(ctx, "SET", "fine:1", "v"); err != nil {
				t.Fatalf("a key the Router places, after the panic: %v", err)
			}
			if err := c.FinishMigration(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
