package shard_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// keysOfSlotsOn returns n keys whose slots the master m of old serves,
// each in a slot of its own (the slots are the server's: CLUSTER
// KEYSLOT).
func keysOfSlotsOn(t *testing.T, old *redistest.Cluster, m *redistest.Server, prefix string, n int) []string {
	t.Helper()
	var keys []string
	slots := map[int]bool{}
	for i := 0; len(keys) < n; i++ {
		require.Less(t, i, 64, "%d keys of distinct slots on %s", n, m.Addr)
		k, slot, err := old.KeyOn(m, prefix+strconv.Itoa(i)+"-")
		require.NoError(t, err)
		if !slots[slot] {
			slots[slot] = true
			keys = append(keys, k)
		}
	}
	return keys
}

func anys(ss ...string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// A cluster client built with Config.Migration routes its commands by
// the old cluster while it waits. The old cluster's table grouped keys
// by node, not by slot: a multi-key command whose keys sit in several
// slots of one old master went out as one command, which the server
// refused with CROSSSLOT, while a client of the old cluster alone split
// it per slot and succeeded. A transaction over such keys was sent, and
// failed with the server's CROSSSLOT, not the *CrossShardError a cluster
// client returns before sending anything.
func TestReview12OldClusterMultiKeySplitsPerSlot(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	old, c, onOld, onNew := oldClusterWaiting(t, 2*time.Second)
	masters := old.Masters()
	require.GreaterOrEqual(t, len(masters), 2)
	tag := "r12xs" + strconv.FormatUint(rand.Uint64(), 36)
	same := keysOfSlotsOn(t, old, masters[0], tag+"a", 3) // three slots of one old master
	other := keysOfSlotsOn(t, old, masters[1], tag+"b", 1)
	keys := append(append([]string(nil), same...), other...)
	t.Cleanup(func() {
		for _, k := range keys {
			_, _ = onNew.Do(context.Background(), "DEL", k)
			_, _ = onOld.Do(context.Background(), "DEL", k)
		}
	})

	t.Run("commands", func(t *testing.T) { multiKeyOnOld(ctx, t, c, onOld, onNew, same, keys) })
	t.Run("pipeline", func(t *testing.T) { pipelineOnOld(ctx, t, c, same) })
	t.Run("tx", func(t *testing.T) { txOnOld(ctx, t, c, onOld, same) })
}

func multiKeyOnOld(ctx context.Context, t *testing.T, c, onOld, onNew *shard.Client, same, keys []string) {
	for _, ks := range [][]string{same, keys} {
		mset := []any{}
		for i, k := range ks {
			mset = append(mset, k, "v"+strconv.Itoa(i))
		}
		_, err := c.Do(ctx, "MSET", mset...)
		require.NoError(t, err, "MSET of keys in %d slots", len(ks))
		got, err := redis.Strings(c.Do(ctx, "MGET", anys(ks...)...))
		require.NoError(t, err, "MGET of keys in %d slots", len(ks))
		want := []string{"v0", "v1", "v2", "v3"}[:len(ks)]
		assert.Equal(t, want, got)
		got, err = redis.Strings(onOld.Do(ctx, "MGET", anys(ks...)...))
		require.NoError(t, err)
		assert.Equal(t, want, got, "written on the old cluster")
		for _, cmd := range []string{"EXISTS", "TOUCH"} {
			n, err := redis.Int(c.Do(ctx, cmd, anys(ks...)...))
			require.NoError(t, err, "%s of keys in %d slots", cmd, len(ks))
			assert.Equal(t, len(ks), n, cmd)
		}
		n, err := redis.Int(c.Do(ctx, "DEL", anys(ks[:2]...)...))
		require.NoError(t, err, "DEL of keys in 2 slots")
		assert.Equal(t, 2, n)
		n, err = redis.Int(c.Do(ctx, "UNLINK", anys(ks...)...))
		require.NoError(t, err, "UNLINK of keys in %d slots", len(ks))
		assert.Equal(t, len(ks)-2, n)
		n, err = redis.Int(onOld.Do(ctx, "EXISTS", anys(ks...)...))
		require.NoError(t, err)
		assert.Equal(t, 0, n, "deleted on the old cluster")
	}
	n, err := redis.Int(onNew.Do(ctx, "EXISTS", anys(keys...)...))
	require.NoError(t, err)
	assert.Equal(t, 0, n, "nothing written on the new cluster while the client waits")
}

func pipelineOnOld(ctx context.Context, t *testing.T, c *shard.Client, same []string) {
	// A pipeline is split the same way, results in queue order.
	p := c.Pipeline()
	p.Send("MSET", same[0], "p0", same[1], "p1", same[2], "p2")
	p.Send("MGET", anys(same...)...)
	p.Send("EXISTS", anys(same...)...)
	p.Send("DEL", anys(same...)...)
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 4)
	for i, r := range res {
		require.NoError(t, r.Err, "pipelined command %d", i)
	}
	got, err := redis.Strings(res[1].Reply, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"p0", "p1", "p2"}, got)
	n, err := redis.Int(res[2].Reply, nil)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	n, err = redis.Int(res[3].Reply, nil)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
}

func txOnOld(ctx context.Context, t *testing.T, c, onOld *shard.Client, same []string) {
	// A transaction over keys of two slots of one node is refused before
	// anything is sent, as by a client of the old cluster alone.
	for name, cl := range map[string]*shard.Client{"old cluster alone": onOld, "waiting": c} {
		ran := false
		_, err := cl.Tx(ctx, same[:2], func(tx *shard.Tx) error {
			ran = true
			return nil
		})
		require.Error(t, err, name)
		var cse *shard.CrossShardError
		assert.True(t, errors.As(err, &cse), "%s: Tx over two slots: %T: %v", name, err, err)
		assert.False(t, ran, name)

		_, err = cl.Tx(ctx, same[:1], func(tx *shard.Tx) error {
			return tx.Queue("SET", same[1], "x")
		})
		require.Error(t, err, name)
		assert.True(t, errors.As(err, &cse), "%s: a queued command of another slot: %T: %v", name, err, err)

		conn := cl.Conn()
		require.NoError(t, conn.Send("MULTI"))
		require.NoError(t, conn.Send("SET", same[0], "x"))
		require.NoError(t, conn.Send("SET", same[1], "y"))
		require.NoError(t, conn.Send("EXEC"))
		_, err = conn.Do("")
		require.Error(t, err, name)
		assert.True(t, errors.As(err, &cse), "%s: MULTI over two slots on a Conn: %T: %v", name, err, err)
		require.NoError(t, conn.Close())
	}
	n, err := redis.Int(onOld.Do(ctx, "EXISTS", anys(same...)...))
	require.NoError(t, err)
	assert.Equal(t, 0, n, "the refused transactions wrote nothing")
}
