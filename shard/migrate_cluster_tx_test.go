package shard_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// halfMove opens the slot of key on old for a move from its master to
// another (IMPORTING, MIGRATING) and moves keys there the way
// redis-cli --cluster does, leaving the slot half moved. It returns the
// slot's master and the importing one.
func halfMove(t *testing.T, old *redistest.Cluster, key string, keys ...string) (owner, dst *redistest.Server) {
	t.Helper()
	owner, dst = ownerAndOther(t, old, key)
	slot := strconv.Itoa(cluster.Slot(key))
	ownerID, err := owner.Do("CLUSTER", "MYID")
	require.NoError(t, err)
	dstID, err := dst.Do("CLUSTER", "MYID")
	require.NoError(t, err)
	_, err = dst.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", ownerID)
	require.NoError(t, err)
	_, err = owner.Do("CLUSTER", "SETSLOT", slot, "MIGRATING", dstID)
	require.NoError(t, err)
	for _, k := range keys {
		r, err := owner.Do("MIGRATE", "127.0.0.1", strconv.Itoa(dst.Port), "", "0", "5000", "KEYS", k)
		require.NoError(t, err)
		require.Equal(t, "OK", r)
	}
	return owner, dst
}

// TestMigrationOutOfAClusterWithAHalfMovedSlot: moving keys out of a
// cluster whose slot is half moved inside it. Redis runs MIGRATE at the
// slot's migrating master locally and answers NOKEY for a key already at
// the importing master; taken for "moved", that lost the key (a read
// answered nil, INCR started at 1). The move now follows the ASK to the
// importing master and carries the key from there; a batch whose keys
// are split between the two masters (TRYAGAIN) fails, and nothing is
// lost.
func TestMigrationOutOfAClusterWithAHalfMovedSlot(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	old := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ringServers := redistest.StartNTB(t, 3, redistest.Options{})
	from, to := clusterConfig(old.Seeds()...), ringConfig(ringServers)
	plain := newClient(t, from)
	c := newClient(t, armedConfig(from, to))

	tests := []struct {
		cmd   []any // the caller's command; its key is inserted second
		setup []any
		want  any
	}{
		{[]any{"INCR"}, []any{"SET", "41"}, int64(42)},
		{[]any{"GET"}, []any{"SET", "v"}, []byte("v")},
		{[]any{"HGET", "f"}, []any{"HSET", "f", "w"}, []byte("w")},
		{[]any{"LPUSH", "x"}, []any{"RPUSH", "a", "b"}, int64(3)},
		{[]any{"APPEND", "!"}, []any{"SET", "hi"}, int64(3)},
	}
	for i, tt := range tests {
		name := tt.cmd[0].(string)
		t.Run(name, func(t *testing.T) {
			k := "halfmoved:{" + strconv.Itoa(i) + "}:" + name
			_, err := plain.Do(ctx, tt.setup[0].(string), append([]any{k}, tt.setup[1:]...)...)
			require.NoError(t, err)
			halfMove(t, old, k, k)

			got, err := c.Do(ctx, name, append([]any{k}, tt.cmd[1:]...)...)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got, "the value that sat at the importing master")
			assert.Equal(t, []string{ringOwner(t, to, k)}, holders(t, ringServers, k), "moved to its new owner")
			n, err := plain.Do(ctx, "EXISTS", k) // follows the slot's ASK to the importing master
			require.NoError(t, err)
			assert.Equal(t, int64(0), n, "a copy left in the cluster")
		})
	}

	t.Run("keys split between the two masters", func(t *testing.T) {
		k1, k2 := "halfmoved:{split}:1", "halfmoved:{split}:2"
		for _, k := range []string{k1, k2} {
			_, err := plain.Do(ctx, "SET", k, k)
			require.NoError(t, err)
		}
		halfMove(t, old, k1, k1) // k2 stays at the migrating master

		_, err := c.Do(ctx, "MSET", k1, "new1", k2, "new2")
		require.Error(t, err, "a move the half-moved slot refused (TRYAGAIN)")
		assert.ErrorIs(t, err, shard.ErrMigration)
		for _, k := range []string{k1, k2} {
			got, err := plain.Do(ctx, "GET", k)
			require.NoError(t, err)
			assert.Equal(t, []byte(k), got, "%s after the refused move", k)
			assert.Empty(t, holders(t, ringServers, k), "%s reached the ring", k)
		}
	})
}
