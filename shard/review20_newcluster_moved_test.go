package shard_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview20MigrationIntoAClusterFollowsAFinishedSlotMove: a ring moving
// into a cluster whose slot moved to another master (keys and all, every
// master told) after the client read the cluster's map. The MIGRATE to
// the slot's former master fails: its RESTORE is refused with MOVED, which
// MIGRATE reports as "ERR Target instance replied with error: MOVED ...".
// Every command that had to move a key of the slot failed with that
// error, and kept failing until the client's next periodic refresh (a
// minute by default), where a cluster client follows the MOVED at once.
// Each command now moves its key to the slot's new master and runs there;
// the key ends there alone, with the value the command left.
func TestReview20MigrationIntoAClusterFollowsAFinishedSlotMove(t *testing.T) {
	ctx := oldClusterContext(t, 2*time.Minute)
	ringServers := redistest.StartNTB(t, 2, redistest.Options{})
	nc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from, to := ringConfig(ringServers), clusterConfig(nc.Seeds()...)
	byAddr := serversByAddr(ringServers)
	c := newClient(t, armedConfig(from, to)) // reads the cluster's map now
	all := append(append([]*redistest.Server{}, ringServers...), nc.Masters()...)

	tests := []struct {
		cmd   []any // the command; its key is inserted second
		want  any
		value string // the key's value afterwards
	}{
		{[]any{"INCR"}, int64(42), "42"},
		{[]any{"APPEND", "!"}, int64(3), "41!"},
		{[]any{"GETEX", "PERSIST"}, []byte("41"), "41"},
		{[]any{"EXPIRE", "1000"}, int64(1), "41"},
	}
	for i, tt := range tests {
		k := "newslot:{" + strconv.Itoa(i) + "}"
		_, err := byAddr[ringOwner(t, from, k)].Do("SET", k, "41")
		require.NoError(t, err)
		dst := wholeMove(ctx, t, nc, k)
		args := append([]any{k}, tt.cmd[1:]...)
		reply, err := c.Do(ctx, tt.cmd[0].(string), args...)
		require.NoError(t, err, "%v", tt.cmd)
		assert.Equal(t, tt.want, reply, "%v", tt.cmd)
		assert.Equal(t, []string{dst.Addr}, placesOf(t, all, k), "%v: the key's places", tt.cmd)
		v, err := dst.Do("GET", k)
		require.NoError(t, err)
		assert.Equal(t, tt.value, v, "%v", tt.cmd)
	}

	// A pipeline whose two keys, of two slots, leave one ring shard for
	// one master in one MIGRATE; one slot moved to another master since.
	// The target took the other slot's key and refused the moved one's.
	k := "newslot:{p}"
	owner, _ := ownerAndOther(t, nc, k)
	var other string
	for i := 0; other == ""; i++ {
		o := "newslot:{q" + strconv.Itoa(i) + "}"
		if m, err := nc.MasterOfSlot(cluster.Slot(o)); err == nil && m.Addr == owner.Addr &&
			cluster.Slot(o) != cluster.Slot(k) && ringOwner(t, from, o) == ringOwner(t, from, k) {
			other = o
		}
		require.Less(t, i, 100000)
	}
	for _, key := range []string{k, other} {
		_, err := byAddr[ringOwner(t, from, key)].Do("SET", key, "10")
		require.NoError(t, err)
	}
	dst := wholeMove(ctx, t, nc, k)
	p := c.Pipeline()
	p.Send("INCR", k)
	p.Send("INCR", other)
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 2)
	for i, r := range res {
		require.NoError(t, r.Err, "%d", i)
		assert.Equal(t, int64(11), r.Reply, "%d", i)
	}
	assert.Equal(t, []string{dst.Addr}, placesOf(t, all, k))
	assert.Equal(t, []string{owner.Addr}, placesOf(t, all, other))

	// A transaction watching such a key.
	k = "newslot:{tx}"
	_, err = byAddr[ringOwner(t, from, k)].Do("SET", k, "5")
	require.NoError(t, err)
	dst = wholeMove(ctx, t, nc, k)
	_, err = c.Tx(ctx, []string{k}, func(tx *shard.Tx) error {
		v, err := redis.Int(tx.Do("GET", k))
		if err != nil {
			return err
		}
		return tx.Queue("SET", k, v+1)
	})
	require.NoError(t, err)
	assert.Equal(t, []string{dst.Addr}, placesOf(t, all, k))
	v, err := dst.Do("GET", k)
	require.NoError(t, err)
	assert.Equal(t, "6", v)
}
