package shard_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// wholeMove moves the slot of key, with its keys, from its master on old
// to another master and tells every master (CLUSTER SETSLOT ... NODE): a
// finished slot migration inside the old cluster. It returns the slot's
// new master.
func wholeMove(ctx context.Context, t *testing.T, old *redistest.Cluster, key string) *redistest.Server {
	t.Helper()
	owner, dst := ownerAndOther(t, old, key)
	_, err := redistest.MoveSlot(ctx, cluster.Slot(key), owner, dst, old.Masters(), redistest.SlotMoveOptions{})
	require.NoError(t, err)
	return dst
}

// placesOf returns the addresses of the servers (old masters, ring
// shards) that hold key; a cluster master that does not serve the key's
// slot answers MOVED and is not counted.
func placesOf(t *testing.T, servers []*redistest.Server, key string) []string {
	t.Helper()
	var out []string
	for _, s := range servers {
		if n, err := s.Do("EXISTS", key); err == nil && n == "1" {
			out = append(out, s.Addr)
		}
	}
	return out
}

// TestReview19MigrationOutOfAClusterFollowsAFinishedSlotMove: moving keys
// out of a cluster whose slot moved to another master (keys and all,
// every master told) after the client read the cluster's map. The old
// master answers MOVED for the slot's keys; a command on one of them
// failed with that MOVED instead of following it, as a cluster client
// does. Every path is tried: a read sent alone, a read in a transaction,
// a read-modify-write (moved first), an overwrite, and a pipeline mixing
// them. Each key ends in exactly one place with the expected value.
func TestReview19MigrationOutOfAClusterFollowsAFinishedSlotMove(t *testing.T) {
	ctx := oldClusterContext(t, 3*time.Minute)
	old := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ringServers := redistest.StartNTB(t, 3, redistest.Options{})
	from, to := clusterConfig(old.Seeds()...), ringConfig(ringServers)
	plain := newClient(t, from)
	c := newClient(t, armedConfig(from, to)) // reads the old cluster's map now
	all := append(append([]*redistest.Server{}, old.Masters()...), ringServers...)

	type step struct {
		cmd   []any // the command; its key is inserted second
		want  any
		moves bool // the key ends at its ring owner (else it stays in the cluster)
		value any  // GET afterwards through the migrating client, when not nil
	}
	tests := []struct {
		name  string
		setup []any
		step  step
	}{
		{"GET", []any{"SET", "v"}, step{[]any{"GET"}, []byte("v"), false, nil}},
		{"TTL", []any{"SET", "v"}, step{[]any{"TTL"}, int64(-1), false, nil}},
		{"HGET", []any{"HSET", "f", "w"}, step{[]any{"HGET", "f"}, []byte("w"), false, nil}},
		{"INCR", []any{"SET", "41"}, step{[]any{"INCR"}, int64(42), true, []byte("42")}},
		{"SET", []any{"SET", "old"}, step{[]any{"SET", "new"}, "OK", true, []byte("new")}},
		{"APPEND", []any{"SET", "hi"}, step{[]any{"APPEND", "!"}, int64(3), true, []byte("hi!")}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := "slotmoved:{" + strconv.Itoa(i) + "}:" + tt.name
			_, err := plain.Do(ctx, tt.setup[0].(string), append([]any{k}, tt.setup[1:]...)...)
			require.NoError(t, err)
			newMaster := wholeMove(ctx, t, old, k)

			got, err := c.Do(ctx, tt.step.cmd[0].(string), append([]any{k}, tt.step.cmd[1:]...)...)
			require.NoError(t, err, "a command on a key whose slot moved inside the old cluster")
			assert.Equal(t, tt.step.want, got)
			want := []string{newMaster.Addr}
			if tt.step.moves {
				want = []string{ringOwner(t, to, k)}
			}
			assert.Equal(t, want, placesOf(t, all, k), "the key in exactly one place")
			if tt.step.value != nil {
				v, err := c.Do(ctx, "GET", k)
				require.NoError(t, err)
				assert.Equal(t, tt.step.value, v)
			}
		})
	}

	t.Run("pipeline", func(t *testing.T) {
		// Two slots, both moved: a read alone, a read in a transaction, a
		// read-modify-write and an overwrite, and a read of a key the
		// batch moves first.
		a1, a2, a3 := "slotmoved:{pa}:1", "slotmoved:{pa}:2", "slotmoved:{pa}:3"
		b1, b2 := "slotmoved:{pb}:1", "slotmoved:{pb}:2"
		for _, kv := range [][]any{{"SET", a1, "a1"}, {"HSET", a2, "f", "a2"}, {"SET", a3, "9"}, {"SET", b1, "b1"}, {"SET", b2, "b2"}} {
			_, err := plain.Do(ctx, kv[0].(string), kv[1:]...)
			require.NoError(t, err)
		}
		wholeMove(ctx, t, old, a1)
		wholeMove(ctx, t, old, b1)

		p := c.Pipeline()
		p.Send("GET", a1)
		p.Send("HGET", a2, "f")
		p.Send("INCR", a3)
		p.Send("GET", a3)
		p.Send("SET", b1, "B1")
		p.Send("GET", b2)
		res, err := p.Exec(ctx)
		require.NoError(t, err)
		want := []any{[]byte("a1"), []byte("a2"), int64(10), []byte("10"), "OK", []byte("b2")}
		require.Len(t, res, len(want))
		for i, r := range res {
			require.NoError(t, r.Err, "command %d", i)
			assert.Equal(t, want[i], r.Reply, "command %d", i)
		}
		for _, k := range []string{a1, a2, a3, b1, b2} {
			assert.Len(t, placesOf(t, all, k), 1, "%s in exactly one place", k)
		}
		assert.Equal(t, []string{ringOwner(t, to, a3)}, placesOf(t, all, a3))
		assert.Equal(t, []string{ringOwner(t, to, b1)}, placesOf(t, all, b1))
	})

	t.Run("transaction", func(t *testing.T) {
		k := "slotmoved:{tx}:1"
		_, err := plain.Do(ctx, "SET", k, "5")
		require.NoError(t, err)
		wholeMove(ctx, t, old, k)
		_, err = c.Tx(ctx, []string{k}, func(tx *shard.Tx) error {
			v, err := tx.Do("GET", k)
			if err != nil {
				return err
			}
			n, _ := strconv.Atoi(string(v.([]byte)))
			return tx.Queue("SET", k, strconv.Itoa(n+1))
		})
		require.NoError(t, err)
		assert.Equal(t, []string{ringOwner(t, to, k)}, placesOf(t, all, k))
		v, err := c.Do(ctx, "GET", k)
		require.NoError(t, err)
		assert.Equal(t, []byte("6"), v)
	})

	t.Run("a redirect loop", func(t *testing.T) {
		// The slot's master gives the slot (empty) to another master,
		// which was not told and still names the first: each answers
		// MOVED to the other, for as long as the test runs.
		k := "slotmoved:{loop}:1"
		owner, other := ownerAndOther(t, old, k)
		otherID, err := other.Do("CLUSTER", "MYID")
		require.NoError(t, err)
		_, err = owner.Do("CLUSTER", "SETSLOT", strconv.Itoa(cluster.Slot(k)), "NODE", otherID)
		require.NoError(t, err)
		for _, cmd := range [][]any{{"INCR", k}, {"GET", k}} {
			_, err = c.Do(ctx, cmd[0].(string), cmd[1:]...)
			require.Error(t, err, "%s in a redirect loop", cmd[0])
			assert.ErrorIs(t, err, shard.ErrMigration)
			assert.ErrorIs(t, err, shard.ErrRetryBudget)
			var me *shard.MigrateError
			assert.ErrorAs(t, err, &me)
		}
		assert.Empty(t, placesOf(t, all, k))
	})

	info, ok := c.Migration()
	require.True(t, ok)
	assert.Equal(t, int64(2), info.Failures, "the two commands of the redirect loop, and no other")
}
