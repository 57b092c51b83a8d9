package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A client named by the convention (client_name=auto) renames its idle
// pooled connections when its routing changes (migrate_name.go). With a
// node of both topologies hung (SIGSTOP) and idle connections to it, the
// rename waits on it: StartMigration (armed, so routing by the new
// topology at once) and AbortMigration (before the fence: routing by the
// old topology again) must still return within the caller's context,
// not after the client's dial and read timeouts (4 s here), and leave the
// client in the state the call asked for.
//
// AbortMigration renames only when the routing changes back: the
// migration is fenced (its marker on the old nodes), not armed.
func TestReview8MigrationRenameBoundedByCallerContext(t *testing.T) {
	const (
		readTimeout = 3 * time.Second
		callTimeout = 300 * time.Millisecond
		limit       = 2 * time.Second // well under the read timeout
	)
	for _, tt := range []struct {
		name string
		run  func(ctx context.Context, c *shard.Client, to shard.Config) error
		on   bool // a migration is on afterwards
	}{
		{"StartMigration armed", func(ctx context.Context, c *shard.Client, to shard.Config) error {
			to.Migration = &shard.Migration{Armed: true}
			return c.StartMigration(ctx, to)
		}, true},
		{"AbortMigration fenced", func(ctx context.Context, c *shard.Client, _ shard.Config) error {
			return c.AbortMigration(ctx)
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			servers := redistest.StartNTB(t, 3, redistest.Options{})
			from := ringConfig(servers[:2])
			from.Pool.ClientName = shard.AutoClientName
			from.Pool.ReadTimeout = readTimeout
			from.DisableAutoPipeline = true // commands give their connections back to the pool
			c := newClient(t, from)
			to := ringConfig([]*redistest.Server{servers[0], servers[2]}) // servers[0] is in both
			to.Pool = from.Pool
			if !tt.on {
				require.NoError(t, c.StartMigration(ctx, to))
				info, _ := c.Migration()
				for _, s := range servers[:2] {
					_, err := s.Do("SET", shard.FenceKey(info.FromID, info.ToID), shard.FenceValue(shard.PhaseFenced, time.Now()))
					require.NoError(t, err)
				}
				waitFor(t, 10*time.Second, "the client fenced", func() bool {
					i, _ := c.Migration()
					return i.Phase == shard.PhaseFenced
				})
			}
			var wg sync.WaitGroup
			for i := range 32 { // several idle connections to every node
				wg.Go(func() { _, _ = c.Do(ctx, "SET", fmt.Sprintf("k:%d", i), "v") })
			}
			wg.Wait()
			require.NoError(t, servers[0].Pause())
			defer func() { require.NoError(t, servers[0].Resume()) }()

			cctx, cancel := context.WithTimeout(ctx, callTimeout)
			defer cancel()
			start := time.Now()
			err := tt.run(cctx, c, to)
			took := time.Since(start)
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s: %v, want nil or a context deadline", tt.name, err)
			}
			require.Less(t, took, limit, "%s waited on the hung server past its context", tt.name)
			_, on := c.Migration()
			require.Equal(t, tt.on, on, "migration on after %s", tt.name)
		})
	}
}

// FinishMigration, which has no context, renames within a dial and a read
// timeout (4 s here); Close ends that wait at once: FinishMigration
// returns soon after Close, and Close does not wait for the hung node.
func TestReview8FinishMigrationRenameEndsWithClose(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from := ringConfig(servers[:2])
	from.Pool.ClientName = shard.AutoClientName
	from.Pool.ReadTimeout = 3 * time.Second
	from.DisableAutoPipeline = true
	c, err := shard.New(ctx, from)
	require.NoError(t, err)
	defer c.Close()
	to := ringConfig([]*redistest.Server{servers[0], servers[2]})
	to.Pool = from.Pool
	require.NoError(t, c.StartMigration(ctx, to)) // never fenced: FinishMigration switches, and renames
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() { _, _ = c.Do(ctx, "SET", fmt.Sprintf("k:%d", i), "v") })
	}
	wg.Wait()
	require.NoError(t, servers[0].Pause())
	defer func() { require.NoError(t, servers[0].Resume()) }()

	done := make(chan error, 1)
	go func() { done <- c.FinishMigration() }()
	waitFor(t, 10*time.Second, "FinishMigration to rename", func() bool {
		for _, g := range stacks() {
			if strings.Contains(g, "SetClientName") {
				return true
			}
		}
		return false
	})
	start := time.Now()
	require.NoError(t, c.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("FinishMigration still renames after Close")
	}
	require.Less(t, time.Since(start), 2*time.Second)
}
