package shard_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestSentinelSameMasterSetTwiceIsADuplicateShard: two ring shards that
// are the same server are refused (ring.ErrDuplicateShard), as for a
// plain ring that lists one server twice: two Sentinel shards naming the
// same master set of the same Sentinels (a typo in a URL's shard list),
// or a plain shard whose address is a Sentinel shard's master. Before,
// New accepted them, and the keys of both shards went to one server:
// correcting the configuration later left the keys of one of them on the
// other's master.
func TestSentinelSameMasterSetTwiceIsADuplicateShard(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	master, err := set.Master(0)
	require.NoError(t, err)

	base := sentinelConfig(set)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := func(t *testing.T, cfg shard.Config) {
		t.Helper()
		c, err := shard.New(ctx, cfg)
		if err == nil {
			c.Close()
			t.Fatal("New accepted a ring with one server as two shards")
		}
		require.ErrorIs(t, err, shard.ErrBadConfig)
		require.ErrorIs(t, err, ring.ErrDuplicateShard)
		require.NotContains(t, err.Error(), sentPW)
	}

	t.Run("same master set twice", func(t *testing.T) {
		cfg := base
		cfg.Shards = append(append([]ring.Shard(nil), base.Shards...), ring.Shard{Name: "twin", Weight: 1})
		cfg.Sentinel.Shards = append(append([]shard.SentinelShard(nil), base.Sentinel.Shards...),
			shard.SentinelShard{Name: "twin", MasterName: set.Names()[0]})
		check(t, cfg)
	})
	t.Run("same master set, the same Sentinel spelt another way", func(t *testing.T) {
		cfg := base
		cfg.Shards = append(append([]ring.Shard(nil), base.Shards...), ring.Shard{Name: "twin", Weight: 1})
		cfg.Sentinel.Shards = append(append([]shard.SentinelShard(nil), base.Sentinel.Shards...),
			shard.SentinelShard{Name: "twin", MasterName: set.Names()[0], Addrs: []string{"localhost:" + strconv.Itoa(set.Sentinels[0].Port)}})
		check(t, cfg)
	})
	t.Run("a plain shard on a Sentinel shard's master", func(t *testing.T) {
		cfg := base
		cfg.Shards = append(append([]ring.Shard(nil), base.Shards...), ring.Shard{Name: "plain", Addr: master.Addr, Weight: 1})
		check(t, cfg)
	})
	t.Run("a plain shard on a Sentinel shard's master, spelt another way", func(t *testing.T) {
		cfg := base
		cfg.Shards = append(append([]ring.Shard(nil), base.Shards...), ring.Shard{Name: "plain", Addr: "localhost:" + strconv.Itoa(master.Port), Weight: 1})
		check(t, cfg)
	})
	t.Run("the same master name at other Sentinels is another master set", func(t *testing.T) {
		o2 := sentinelSetOptions(1)
		o2.Sentinels = 1
		other := redistest.StartSentinelsTB(t, o2)
		cfg := base
		cfg.Shards = append(append([]ring.Shard(nil), base.Shards...), ring.Shard{Name: "other", Weight: 1})
		cfg.Sentinel.Shards = append(append([]shard.SentinelShard(nil), base.Sentinel.Shards...),
			shard.SentinelShard{Name: "other", MasterName: other.Names()[0], Addrs: other.Addrs()})
		c, err := shard.New(ctx, cfg)
		require.NoError(t, err)
		defer c.Close()
		_, err = c.Do(ctx, "SET", "k", "v")
		require.NoError(t, err)
	})
}
