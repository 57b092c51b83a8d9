package shard_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview3MigrationDoKeyUnknownCommandMovesItsKey: a command the
// client's table does not know (a module's, here APPEND renamed on the
// servers) sent with DoKey during a migration ran at the routing key's new
// owner without moving the key there first: a read-modify-write started
// from nothing there (a fresh value), and the next move of the key met the
// new owner's copy (BUSYKEY) and deleted the old value. The client cannot
// know such a command's keys, so it moves the routing key first; every
// answer must then continue the old value.
func TestReview3MigrationDoKeyUnknownCommandMovesItsKey(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{Args: []string{"--rename-command", "APPEND", "MODAPPEND"}})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	old := newClient(t, from)
	c := newClient(t, armedConfig(from, to))
	keys := movingKeys(t, from, to, "r3dk:", 2)
	for _, k := range keys {
		_, err := old.Do(ctx, "SET", k, "abc")
		require.NoError(t, err)
	}

	// A single command.
	n, err := redis.Int(c.DoKey(ctx, keys[0], "MODAPPEND", keys[0], "def"))
	require.NoError(t, err)
	assert.Equal(t, 6, n, "MODAPPEND started from a fresh value at the new owner")
	v, err := redis.String(c.Do(ctx, "GET", keys[0]))
	require.NoError(t, err)
	assert.Equal(t, "abcdef", v)

	// In a pipeline.
	p := c.Pipeline()
	p.SendKey(keys[1], "MODAPPEND", keys[1], "xyz")
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.NoError(t, res[0].Err)
	n, err = redis.Int(res[0].Reply, nil)
	require.NoError(t, err)
	assert.Equal(t, 6, n, "MODAPPEND in a pipeline started from a fresh value at the new owner")
	v, err = redis.String(c.Do(ctx, "GET", keys[1]))
	require.NoError(t, err)
	assert.Equal(t, "abcxyz", v)
	// A command whose keys cannot be learned is refused, nothing sent.
	_, err = c.DoKey(ctx, keys[0], "NOSUCHCOMMAND", keys[0])
	assert.ErrorIs(t, err, shard.ErrMigration)
	assert.ErrorIs(t, err, shard.ErrUnknownCommand)
	for _, k := range keys {
		assert.Equal(t, []string{ringOwner(t, to, k)}, holders(t, servers, k), "%s sits at its new owner alone", k)
	}
}
