package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ketamaPlacement returns where the ketama ring of weights (shards a, b,
// c, ... on ports 7001, 7002, ...) puts a sample of keys, by address.
func ketamaPlacement(t *testing.T, weights []int) string {
	t.Helper()
	r, err := ring.New(ring.Config{Algorithm: ring.Ketama, Shards: ketamaShards(weights)})
	require.NoError(t, err)
	var b strings.Builder
	for i := range 50000 {
		s, _ := r.Shard(r.Locate(fmt.Sprintf("key:%d", i)))
		b.WriteString(s.Addr)
		b.WriteByte(' ')
	}
	return b.String()
}

func ketamaShards(weights []int) []ring.Shard {
	shards := make([]ring.Shard, len(weights))
	for i, w := range weights {
		shards[i] = ring.Shard{Name: string(rune('a' + i)), Addr: fmt.Sprintf("127.0.0.1:%d", 7001+i), Weight: w}
	}
	return shards
}

// TestReview17KetamaTopologyIDFollowsPlacement: twemproxy's ketama gives
// a server floor(w/W x 40 x n) x 4 points, so weights in one proportion
// (1,1,1 and 2,2,2), and weights whose proportions round to the same
// point counts (1,2 and 100,201), place every key alike. Their configs
// must share a TopologyID (processes configured either way route alike,
// and the mover must take them for one topology), while weights that
// place keys otherwise must not. Placement is judged by the ring itself.
func TestReview17KetamaTopologyIDFollowsPlacement(t *testing.T) {
	weights := [][]int{
		{1, 1, 1}, {2, 2, 2}, {7, 7, 7}, {1, 1, 2}, {2, 2, 4}, {1, 2, 2},
		{1, 2}, {2, 4}, {100, 201}, {1, 1}, {3, 3}, {99, 101}, {100000000, 100000001},
	}
	byPlacement := map[string][]int{}
	idOf := map[string][]int{}
	for _, w := range weights {
		p := ketamaPlacement(t, w)
		id := shard.TopologyID(shard.Config{Hash: ring.Ketama, Shards: ketamaShards(w)})
		if o, ok := byPlacement[p]; ok {
			oid := shard.TopologyID(shard.Config{Hash: ring.Ketama, Shards: ketamaShards(o)})
			if oid != id {
				t.Errorf("weights %v and %v place every key alike, but their IDs differ: %s, %s", o, w, oid, id)
			}
		} else {
			byPlacement[p] = w
		}
		if o, ok := idOf[id]; ok && ketamaPlacement(t, o) != p {
			t.Errorf("weights %v and %v place keys differently, but share ID %s", o, w, id)
		} else if !ok {
			idOf[id] = w
		}
	}
}

// TestReview17KetamaMigrationBetweenEqualPlacements: a client on a ketama
// ring of weights 1,1,1 asked to migrate to the same servers with weights
// 2,2,2, which place every key alike (judged by the ring), started a
// migration (fence, beacons, a mover to run) that had nothing to move. It
// is refused as a bad config saying so, and no migration is on; weights
// that place keys otherwise migrate.
func TestReview17KetamaMigrationBetweenEqualPlacements(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := func(w ...int) shard.Config {
		c := ringConfig(servers)
		c.Hash = ring.Ketama
		for i := range c.Shards {
			c.Shards[i].Weight = w[i]
		}
		return c
	}
	same := func(a, b []int) bool {
		ra, err := ring.New(cfg(a...).RingConfig())
		require.NoError(t, err)
		rb, err := ring.New(cfg(b...).RingConfig())
		require.NoError(t, err)
		for i := range 50000 {
			k := fmt.Sprintf("key:%d", i)
			sa, _ := ra.Shard(ra.Locate(k))
			sb, _ := rb.Shard(rb.Locate(k))
			if sa.Addr != sb.Addr {
				return false
			}
		}
		return true
	}
	require.True(t, same([]int{1, 1, 1}, []int{2, 2, 2}), "the premise: 1,1,1 and 2,2,2 place alike")
	require.False(t, same([]int{1, 1, 1}, []int{1, 1, 2}), "the premise: 1,1,1 and 1,1,2 do not")

	c := newClient(t, cfg(1, 1, 1))
	_, err := c.Do(ctx, "SET", "r17ketama:k", "v")
	require.NoError(t, err)
	err = c.StartMigration(ctx, cfg(2, 2, 2))
	require.Error(t, err, "a migration between placements that put every key alike")
	assert.ErrorIs(t, err, shard.ErrBadConfig)
	assert.Contains(t, err.Error(), "nothing to move")
	_, on := c.Migration()
	assert.False(t, on, "a migration is on after the refusal")

	require.NoError(t, c.StartMigration(ctx, cfg(1, 1, 2)))
	_, on = c.Migration()
	assert.True(t, on)
}
