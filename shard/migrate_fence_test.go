package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// migrateCalls sums the MIGRATE commands servers have run (INFO
// commandstats): client-side moves counted by the servers themselves.
func migrateCalls(t *testing.T, servers []*redistest.Server) int {
	t.Helper()
	total := 0
	for _, s := range servers {
		n, err := s.CommandCalls("migrate")
		require.NoError(t, err)
		total += n
	}
	return total
}

// TestMigrationFencePhases walks a client through the fence with markers
// set by hand: no MIGRATE before the marker says armed, commands on
// moving keys wait while fenced, keys that stay are served throughout.
func TestMigrationFencePhases(t *testing.T) {
	for _, runtime := range []bool{false, true} {
		t.Run(fmt.Sprintf("runtime=%v", runtime), func(t *testing.T) {
			ctx := context.Background()
			servers := redistest.StartNTB(t, 4, redistest.Options{})
			from, to := ringConfig(servers[:3]), ringConfig(servers)
			// A command waits for arming at most a read timeout: room for
			// a loaded machine's polls.
			from.Pool.ReadTimeout, to.Pool.ReadTimeout = 5*time.Second, 5*time.Second
			moving, staying := keysByMove(t, from, to, "ph:%d", 20, 20)
			var c *shard.Client
			if runtime {
				c = newClient(t, from)
				require.NoError(t, c.StartMigration(ctx, to))
			} else {
				cfg := to
				cfg.Migration = &shard.Migration{From: &from}
				c = newClient(t, cfg)
			}
			info, ok := c.Migration()
			require.True(t, ok)
			assert.Equal(t, shard.PhaseWaiting, info.Phase)
			for _, k := range append(append([]string{}, moving...), staying...) {
				v, err := redis.Int(c.Do(ctx, "INCR", k))
				require.NoError(t, err)
				require.Equal(t, 1, v)
				assert.Equal(t, []string{ringOwner(t, from, k)}, holders(t, servers, k), "waiting: %s stays at its old owner", k)
			}
			assert.Zero(t, migrateCalls(t, servers), "no MIGRATE while waiting")

			// Fenced: the routing is the new one, moves wait.
			key := shard.FenceKey(info.FromID, info.ToID)
			for _, s := range servers[:3] {
				_, err := s.Do("SET", key, shard.FenceValue(shard.PhaseFenced, time.Now()))
				require.NoError(t, err)
			}
			waitFor(t, 10*time.Second, "the client fenced", func() bool {
				i, _ := c.Migration()
				return i.Phase == shard.PhaseFenced
			})
			waitFor(t, 10*time.Second, "the beacons renamed fenced", func() bool {
				list, err := servers[0].Do("CLIENT", "LIST")
				return err == nil && strings.Contains(list, ":fenced:")
			})
			for _, k := range staying {
				v, err := redis.Int(c.Do(ctx, "INCR", k))
				require.NoError(t, err)
				assert.Equal(t, 2, v)
			}
			short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			_, err := c.Do(short, "INCR", moving[0])
			cancel()
			var me *shard.MigrateError
			require.ErrorAs(t, err, &me)
			assert.True(t, errors.Is(err, shard.ErrMigration) && errors.Is(err, context.DeadlineExceeded), "%v", err)
			assert.Equal(t, []string{ringOwner(t, from, moving[0])}, holders(t, servers, moving[0]))
			assert.Zero(t, migrateCalls(t, servers), "no MIGRATE while fenced")

			// A command that waits goes on once armed; the marker on one
			// old node is enough.
			done := make(chan error, 1)
			var got int
			go func() {
				v, err := redis.Int(c.Do(ctx, "INCR", moving[1]))
				got = v
				done <- err
			}()
			_, err = servers[1].Do("SET", key, shard.FenceValue(shard.PhaseArmed, time.Now()))
			require.NoError(t, err)
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(10 * time.Second):
				t.Fatal("the waiting command did not go on once armed")
			}
			assert.Equal(t, 2, got)
			info, _ = c.Migration()
			assert.Equal(t, shard.PhaseArmed, info.Phase)
			for _, k := range moving {
				want := 2
				if k == moving[1] {
					want = 3
				}
				v, err := redis.Int(c.Do(ctx, "INCR", k))
				require.NoError(t, err)
				assert.Equal(t, want, v, "%s continues its counter", k)
				assert.Equal(t, []string{ringOwner(t, to, k)}, holders(t, servers, k), "armed: %s moved", k)
			}
			assert.Positive(t, migrateCalls(t, servers), "armed: keys move by MIGRATE")
		})
	}
}

// TestMigrationFenceUpButNotArmedFailsInsteadOfHanging: when arming does
// not follow the fence (the mover refused at its second check), a command
// on a moving key fails with ErrMigration after the read timeout, even
// with a context that never ends; the key stays where it is.
func TestMigrationFenceUpButNotArmedFailsInsteadOfHanging(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from, to := ringConfig(servers[:1]), ringConfig(servers)
	to.Pool.ReadTimeout = 300 * time.Millisecond
	var k string
	for i := 0; ; i++ {
		k = fmt.Sprintf("up:%d", i)
		if ringOwner(t, to, k) != servers[0].Addr {
			break
		}
	}
	_, err := servers[0].Do("SET", k, "7")
	require.NoError(t, err)
	cfg := to
	cfg.Migration = &shard.Migration{From: &from}
	info := func() shard.MigrationInfo {
		c, err := shard.New(ctx, cfg)
		require.NoError(t, err)
		defer c.Close()
		i, _ := c.Migration()
		return i
	}()
	_, err = servers[0].Do("SET", shard.FenceKey(info.FromID, info.ToID), shard.FenceValue(shard.PhaseFenced, time.Now()))
	require.NoError(t, err)
	c := newClient(t, cfg) // reads the marker before New returns
	i, _ := c.Migration()
	require.Equal(t, shard.PhaseFenced, i.Phase)
	start := time.Now()
	_, err = c.Do(ctx, "INCR", k)
	require.ErrorIs(t, err, shard.ErrMigration)
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, []string{servers[0].Addr}, holders(t, servers, k), "nothing moved")
	v, err := servers[0].Do("GET", k)
	require.NoError(t, err)
	assert.Equal(t, "7", v)
}
