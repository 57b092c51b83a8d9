package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// currentRingRouter returns the ring router c routes by now.
func currentRingRouter(t *testing.T, c *shard.Client) *shard.RingRouter {
	t.Helper()
	rr, ok := c.Router().(*shard.RingRouter)
	require.True(t, ok, "a ring client's Router is a *RingRouter")
	return rr
}

// checkEjectedPlacement writes every key through c, reads it back, and
// checks that each is held by exactly one server, none of them out.
func checkEjectedPlacement(t *testing.T, c *shard.Client, servers []*redistest.Server, keys []string, val string, out ...*redistest.Server) {
	t.Helper()
	ctx := context.Background()
	for _, k := range keys {
		_, err := c.Do(ctx, "SET", k, val)
		require.NoError(t, err)
		got, err := redis.String(c.Do(ctx, "GET", k))
		require.NoError(t, err)
		require.Equal(t, val, got, "GET %s after SET", k)
		h := holders(t, servers, k)
		require.Len(t, h, 1, "key %s is held once", k)
		for _, s := range out {
			require.NotEqual(t, s.Addr, h[0], "key %s is on the shard ejected by hand", k)
		}
	}
}

// A shard the operator ejected by hand (maintenance) stays out of the
// ring when a migration replaces the client's ring router by one for a
// topology that has the same shard: at the fence's switch, and after
// FinishMigration. Its keys go to the stand-in shards, never to it.
func TestReview15HandEjectionHoldsAcrossMigration(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	for _, armed := range []bool{true, false} {
		t.Run(fmt.Sprintf("armed=%v", armed), func(t *testing.T) {
			c, old, keys := handEjectedRing(t, servers, from, "hand", 200)
			checkEjectedPlacement(t, c, servers, keys, "before", servers[1])

			require.NoError(t, c.StartMigration(ctx, to))
			if armed {
				require.NoError(t, c.ArmMigration())
				nr := currentRingRouter(t, c)
				require.NotSame(t, old, nr, "the fence's switch routes by the new topology's router")
				assert.True(t, nr.Ejected(1), "the shard ejected by hand is out of the new router")
				for _, i := range []int{0, 2, 3} {
					assert.False(t, nr.Ejected(i), "shard %d", i)
				}
				// Reads move each key to its owner in the new ring.
				for _, k := range keys {
					got, err := redis.String(c.Do(ctx, "GET", k))
					require.NoError(t, err)
					require.Equal(t, "before", got, "GET %s during the migration", k)
					assert.NotContains(t, holders(t, servers, k), servers[1].Addr, "key %s", k)
				}
				checkEjectedPlacement(t, c, servers, keys, "during", servers[1])
			}
			// Unarmed, FinishMigration switches to the new router itself.
			require.NoError(t, c.FinishMigration())
			nr := currentRingRouter(t, c)
			require.NotSame(t, old, nr)
			assert.True(t, nr.Ejected(1), "the shard ejected by hand is out after FinishMigration")
			if !armed {
				// No key was moved: the old copies are not the point here.
				flushServers(t, servers)
			}
			checkEjectedPlacement(t, c, servers, keys, "after", servers[1])

			// The operator's Restore puts it back.
			require.NoError(t, nr.Restore(1))
			assert.False(t, nr.Ejected(1))
			var onIt int
			for _, k := range keys {
				_, err := c.Do(ctx, "SET", k, "restored")
				require.NoError(t, err)
				if n, err := servers[1].Do("EXISTS", k); err == nil && n == "1" {
					onIt++
				}
			}
			assert.Positive(t, onIt, "restored, shard 1 owns keys again")
		})
	}
}

// AbortMigration routes by the old topology's router again: the
// ejections and restores the operator made by hand on the router routed
// by meanwhile hold there too.
func TestReview15HandEjectionHoldsAcrossAbortMigration(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	for _, armed := range []bool{true, false} {
		t.Run(fmt.Sprintf("armed=%v", armed), func(t *testing.T) {
			c, old, keys := handEjectedRing(t, servers, from, "abort", 200)
			require.NoError(t, c.StartMigration(ctx, to))
			if armed {
				require.NoError(t, c.ArmMigration())
			}
			// Maintenance moves on: shard 1 is back, shard 2 leaves.
			cur := currentRingRouter(t, c)
			require.NoError(t, cur.Restore(1))
			require.NoError(t, cur.Eject(2))
			checkEjectedPlacement(t, c, servers, keys, "during", servers[2])

			require.NoError(t, c.AbortMigration(ctx))
			if armed {
				require.NoError(t, c.ArmMigration()) // the rollback's fence
			}
			back := currentRingRouter(t, c)
			require.Same(t, old, back, "the client routes by the old topology again")
			assert.False(t, back.Ejected(1), "restored by hand during the migration")
			assert.True(t, back.Ejected(2), "ejected by hand during the migration")
			assert.False(t, back.Ejected(0))
			checkEjectedPlacement(t, c, servers, keys, "after", servers[2])
			if armed {
				require.NoError(t, c.FinishMigration())
				assert.True(t, currentRingRouter(t, c).Ejected(2))
			}
		})
	}
}

// After a migration the client routes by the new topology's ring router:
// ejecting a shard by hand there re-places the subscriptions as on the
// router the client was built with, so PUBLISH through the client (sent
// to the stand-in shard) still reaches them.
func TestReview15HandEjectionAfterMigrationMovesSubscriptions(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	c := newClient(t, from)
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	require.NoError(t, c.FinishMigration())
	nr := currentRingRouter(t, c)

	r := ringOf(t, to.RingConfig())
	var channel string
	for i := 0; channel == ""; i++ {
		if name := fmt.Sprintf("moved:%d", i); r.Locate(name) == 1 {
			channel = name
		}
	}
	sub, err := c.Subscribe(ctx, channel)
	require.NoError(t, err)
	defer sub.Close()
	_ = receiveWithin(t, sub, 5*time.Second)
	require.Equal(t, 1, numSub(t, servers[1], "NUMSUB", channel))

	require.NoError(t, nr.Eject(1))
	waitFor(t, 10*time.Second, "a PUBLISH through the client to reach the subscription", func() bool {
		n, err := redis.Int(c.Do(ctx, "PUBLISH", channel, "x"))
		return err == nil && n == 1
	})
	assert.Equal(t, 0, numSub(t, servers[1], "NUMSUB", channel), "the subscription left the shard ejected by hand")
}

// A Sentinel shard ejected by hand stays out when its master fails over:
// the client follows the new master without building another ring router,
// and writes never reach either server of the shard the operator took out.
func TestReview15HandEjectionHoldsAcrossSentinelFailover(t *testing.T) {
	ctx := context.Background()
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(2))
	cfg := sentinelConfig(set)
	cfg.Sentinel.RefreshInterval = 50 * time.Millisecond
	cfg.Sentinel.MinRefreshInterval = 10 * time.Millisecond
	c := newClient(t, cfg)
	rr := currentRingRouter(t, c)
	require.NoError(t, rr.Eject(1))
	old, err := set.Master(1)
	require.NoError(t, err)
	next, err := set.Replica(1)
	require.NoError(t, err)
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = fmt.Sprintf("sent:%d", i)
	}
	written := func(val string) {
		t.Helper()
		for _, k := range keys {
			_, err := c.Do(ctx, "SET", k, val)
			require.NoError(t, err)
			got, err := redis.String(c.Do(ctx, "GET", k))
			require.NoError(t, err)
			require.Equal(t, val, got, "GET %s after SET", k)
			for _, s := range []*redistest.Server{old, next} {
				n, err := s.Do("EXISTS", k)
				require.NoError(t, err)
				require.Equal(t, "0", n, "key %s is on %s, of the shard ejected by hand", k, s.Addr)
			}
		}
	}
	written("before")

	_, err = set.Sentinels[0].Do("SENTINEL", "FAILOVER", set.Names()[1])
	require.NoError(t, err)
	waitFor(t, 60*time.Second, "the client to follow shard 1's failover", func() bool {
		for _, st := range c.Stats().Sentinel {
			if st.Name == "shard-1" {
				return st.Master == next.Addr
			}
		}
		return false
	})
	require.Same(t, rr, currentRingRouter(t, c), "a failover keeps the ring router")
	assert.True(t, rr.Ejected(1), "the shard ejected by hand is still out after its failover")
	written("after")
}
