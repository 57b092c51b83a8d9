package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A ring pattern is subscribed on every shard of the topology the client
// routes by. During a migration that made two gaps:
//
//   - the pattern reached the new topology's shards only once the client
//     switched to it, after its own PUBLISHes did: the first messages of
//     the channels routed to a new shard were published to no subscriber;
//   - it left the shards the new topology drops at the switch, while the
//     processes not switched yet still publish there.
//
// It is now subscribed on the shards of both topologies from StartMigration
// to FinishMigration (a PUBLISH reaches one shard: nothing comes twice).
func TestReview10PubSubPatternCoversBothSidesOfAMigration(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from, to := ringConfig(servers[:2]), ringConfig(servers[1:])
	for i := range to.Shards {
		to.Shards[i].Name = fmt.Sprintf("shard-%d", i+1)
	}
	c := newClient(t, from)
	newRing, err := shard.NewRingRouter(to.RingConfig())
	require.NoError(t, err)
	var moving string // a channel the new ring places on the new shard
	for i := 0; moving == ""; i++ {
		require.Less(t, i, 10000)
		n := fmt.Sprintf("r10gap:%d", i)
		is, err := newRing.Route(n)
		require.NoError(t, err)
		if is.Addr == servers[2].Addr {
			moving = n
		}
	}
	numpat := func(s *redistest.Server) string {
		n, err := s.Do("PUBSUB", "NUMPAT")
		if err != nil {
			return err.Error()
		}
		return n
	}

	sub, err := c.PSubscribe(ctx, "r10gap:*")
	require.NoError(t, err)
	defer sub.Close()
	require.Equal(t, "0", numpat(servers[2]))

	require.NoError(t, c.StartMigration(ctx, to))
	waitFor(t, 10*time.Second, "the pattern on the new shard before the client routes there", func() bool {
		return numpat(servers[2]) == "1"
	})
	require.NoError(t, c.ArmMigration())
	n, err := redis.Int(c.Do(ctx, "PUBLISH", moving, "first"))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the first message on the new shard has a subscriber")

	// A second pattern, confirmed on every node where patterns go now: the
	// placement after the switch is in force.
	require.NoError(t, sub.PSubscribe(ctx, "r10gap2:*"))
	waitFor(t, 10*time.Second, "both patterns on the shard the new ring drops, until FinishMigration", func() bool {
		return numpat(servers[0]) == "2"
	})
	// A process not switched yet publishes on the old shard.
	np, err := servers[0].Do("PUBLISH", "r10gap:old", "late")
	require.NoError(t, err)
	assert.Equal(t, "1", np, "a message of a process still on the old ring has a subscriber")

	var got []string
	for len(got) < 2 {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := sub.Receive(rctx)
		rcancel()
		require.NoError(t, err, "got %v", got)
		if m, ok := v.(redis.Message); ok {
			got = append(got, m.Channel+"="+string(m.Data))
		}
	}
	assert.ElementsMatch(t, []string{moving + "=first", "r10gap:old=late"}, got)

	require.NoError(t, c.FinishMigration())
	waitFor(t, 10*time.Second, "the dropped shard left at FinishMigration", func() bool { return numpat(servers[0]) == "0" })
	assert.Equal(t, "2", numpat(servers[1]))
	assert.Equal(t, "2", numpat(servers[2]))
	assert.Zero(t, sub.Stats().Resubscribed, "no pattern was subscribed again: they joined the new shard")
}

// A migration back out of a cluster (a ring client moved into one and
// turned around once armed) routes by the ring again at its fence, with
// the cluster as the side keys move away from. A ring pattern must not
// be placed on the cluster's masters then: the cluster broadcasts a
// PUBLISH to every node, and a pattern on each master would deliver each
// message once per master.
func TestReview10PubSubPatternNotOnEveryMasterLeavingACluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, servers := startRing(t, 2)
	to := intoCluster(t, ringConfig(servers))
	masters := clusterForTest(t).Masters()
	require.NotEmpty(t, masters)
	sub, err := c.PSubscribe(ctx, "r10back:*")
	require.NoError(t, err)
	defer sub.Close()

	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	require.NoError(t, c.AbortMigration(ctx))
	require.NoError(t, c.ArmMigration()) // the reverse fence: routed by the ring again
	_, isRing := c.Router().(*shard.RingRouter)
	require.True(t, isRing, "%T", c.Router())
	// Confirmed wherever patterns go now.
	require.NoError(t, sub.PSubscribe(ctx, "r10back2:*"))
	patternsOnMasters := func() int {
		n := 0
		for _, m := range masters {
			v, err := m.Do("PUBSUB", "NUMPAT")
			require.NoError(t, err)
			k, err := strconv.Atoi(v)
			require.NoError(t, err)
			n += k
		}
		return n
	}
	waitFor(t, 10*time.Second, "the pattern off the cluster's masters once routed by the ring", func() bool {
		return patternsOnMasters() == 0
	})
	for _, s := range servers {
		v, err := s.Do("PUBSUB", "NUMPAT")
		require.NoError(t, err)
		assert.Equal(t, "2", v, "both patterns on each ring shard %s", s.Addr)
	}
	require.NoError(t, c.FinishMigration())
}

// A migration aborted before it was armed leaves the new topology's
// shards, where the pattern went at StartMigration.
func TestReview10PubSubPatternLeavesTheNewShardsOnAbort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from, to := ringConfig(servers[:2]), ringConfig(servers)
	c := newClient(t, from)
	sub, err := c.PSubscribe(ctx, "r10abort:*")
	require.NoError(t, err)
	defer sub.Close()
	numpat := func(s *redistest.Server) string {
		n, err := s.Do("PUBSUB", "NUMPAT")
		if err != nil {
			return err.Error()
		}
		return n
	}
	require.NoError(t, c.StartMigration(ctx, to))
	waitFor(t, 10*time.Second, "the pattern on the new shard", func() bool { return numpat(servers[2]) == "1" })
	assert.Equal(t, 3, sub.Stats().Connections)
	require.NoError(t, c.AbortMigration(ctx))
	waitFor(t, 10*time.Second, "the new shard left", func() bool {
		return numpat(servers[2]) == "0" && sub.Stats().Connections == 2
	})
	assert.Equal(t, "1", numpat(servers[0]))
	assert.Equal(t, "1", numpat(servers[1]))
}
