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

// TestReview18AloneReadsAtAClusterOldOwnerRedirected: during a migration
// out of a cluster (the rollback of a ring moved into one), a read sent
// alone to a key's old owner may meet ASK (the key has left within the
// cluster, its slot half moved) or MOVED (the whole slot has moved since
// the client last read the slot map). Neither reply is the answer, nor
// says the key is missing: the read is not answered at the old owner
// (MigrationInfo.OldReads), the key moves from where it is in the cluster
// (the ASK's importing master, migrate_cluster_tx.go) and the read returns
// its value; a MOVED is followed, and the read is answered by the slot's
// new master, where the key is.
func TestReview18AloneReadsAtAClusterOldOwnerRedirected(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	old := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ringServers := redistest.StartNTB(t, 3, redistest.Options{})

	from, to := clusterConfig(old.Seeds()...), ringConfig(ringServers)
	plain := newClient(t, from)
	c := newClient(t, armedConfig(from, to))

	reads := []struct {
		cmd   string
		setup []any
		want  any
	}{
		{"GET", []any{"SET", "v"}, []byte("v")},
		{"TTL", []any{"SET", "v"}, int64(-1)},
		{"HLEN", []any{"HSET", "f", "v"}, int64(1)},
		{"HGETALL", []any{"HSET", "f", "v"}, []any{[]byte("f"), []byte("v")}},
		{"LLEN", []any{"RPUSH", "a", "b"}, int64(2)},
		{"EXISTS", []any{"SET", "v"}, int64(1)},
		{"TYPE", []any{"SET", "v"}, "string"},
	}
	for i, rd := range reads {
		t.Run(rd.cmd, func(t *testing.T) {
			ask := "r18ask:{" + strconv.Itoa(i) + "}:" + rd.cmd
			moved := "r18moved:{" + strconv.Itoa(i) + "}:" + rd.cmd
			for _, k := range []string{ask, moved} {
				_, err := plain.Do(ctx, rd.setup[0].(string), append([]any{k}, rd.setup[1:]...)...)
				require.NoError(t, err)
			}

			// ASK: the slot half moved, the key at the importing master.
			owner, _ := halfMove(t, old, ask, ask)
			_, err := owner.Do(rd.cmd, ask)
			require.Error(t, err)
			require.Contains(t, err.Error(), "ASK", "the old owner redirects")

			info, _ := c.Migration()
			got, err := c.Do(ctx, rd.cmd, ask)
			after, _ := c.Migration()
			assert.Equal(t, info.OldReads, after.OldReads, "ASK taken for the answer at the old owner")
			require.NoError(t, err, "a key that left within the cluster (ASK)")
			assert.Equal(t, rd.want, got, "the key's value, moved from the importing master")
			assert.Equal(t, []string{ringOwner(t, to, ask)}, holders(t, ringServers, ask), "moved to its new owner")

			// MOVED: the whole slot moved since the client read the map.
			owner, dst := ownerAndOther(t, old, moved)
			_, err = redistest.MoveSlot(ctx, cluster.Slot(moved), owner, dst, old.Masters(), redistest.SlotMoveOptions{})
			require.NoError(t, err)
			_, err = owner.Do(rd.cmd, moved)
			require.Error(t, err)
			require.Contains(t, err.Error(), "MOVED", "the old owner redirects")

			// The MOVED is followed: the read is answered once, by the
			// slot's new master, where the key still is.
			info, _ = c.Migration()
			got, err = c.Do(ctx, rd.cmd, moved)
			after, _ = c.Migration()
			require.NoError(t, err, "a key whose slot moved within the cluster (MOVED)")
			assert.Equal(t, rd.want, got, "a key whose slot moved within the cluster (MOVED)")
			assert.Equal(t, info.OldReads+1, after.OldReads, "reads answered in the old cluster, after its MOVED")
			n, err := dst.Do("EXISTS", moved)
			require.NoError(t, err)
			assert.Equal(t, "1", n, "the key stays where the read found it")
		})
	}
	info, ok := c.Migration()
	require.True(t, ok)
	assert.Equal(t, shard.PhaseArmed, info.Phase)
}
