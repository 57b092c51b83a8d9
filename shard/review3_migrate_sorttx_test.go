package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview3MigrationSortPatternsInTransactions: a SORT ... BY/GET whose
// pattern keys may still sit at their old owner is refused during a
// migration (TestReview2MigrationSortPatternsSeeTheLatestValues) — and so
// it must be inside a transaction: Client.Tx's Do and Queue, and a Conn's
// read under WATCH and its MULTI ... EXEC. There the sorted key is moved
// first, but the pattern's keys cannot be, and the SORT at the new owner
// answered a wrong order (or nil values) without an error. Every answer
// given must be the right one; a refusal must be a *MigrateError.
func TestReview3MigrationSortPatternsInTransactions(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	old := newClient(t, from)
	c := newClient(t, armedConfig(from, to))
	tags, _ := keysByMove(t, from, to, "{r3s%d}", 4, 0)
	require.Len(t, tags, 4)
	for _, tg := range tags {
		sortFixture(t, old, tg)
	}
	want := []string{"3", "2", "1"}
	check := func(what string, reply any, err error) {
		t.Helper()
		if err != nil {
			assert.True(t, errors.Is(err, shard.ErrMigration), "%s: %v", what, err)
			var me *shard.MigrateError
			if assert.True(t, errors.As(err, &me), "%s: %v", what, err) {
				assert.False(t, me.Sent, what)
			}
			return
		}
		got, serr := redis.Strings(reply, nil)
		require.NoError(t, serr, what)
		assert.Equal(t, want, got, "%s: a wrong order, answered without an error", what)
	}

	// Client.Tx, a read with tx.Do.
	tg := tags[0]
	var reply any
	var doErr error
	_, err := c.Tx(ctx, []string{tg + "list"}, func(tx *shard.Tx) error {
		reply, doErr = tx.Do("SORT", tg+"list", "BY", tg+"w_*")
		return nil
	})
	require.NoError(t, err)
	check("Tx.Do SORT BY", reply, doErr)

	// Client.Tx, queued between MULTI and EXEC.
	tg = tags[1]
	var qErr error
	replies, err := c.Tx(ctx, []string{tg + "list"}, func(tx *shard.Tx) error {
		qErr = tx.Queue("SORT", tg+"list", "BY", tg+"w_*")
		return qErr
	})
	if qErr != nil {
		check("Tx.Queue SORT BY", nil, qErr)
	} else {
		require.NoError(t, err)
		require.Len(t, replies, 1)
		check("Tx.Queue SORT BY", replies[0], nil)
	}

	// A Conn: a read under WATCH.
	tg = tags[2]
	conn := c.Conn()
	_, err = conn.Do("WATCH", tg+"list")
	require.NoError(t, err)
	reply, err = conn.Do("SORT", tg+"list", "BY", tg+"w_*")
	check("Conn SORT BY under WATCH", reply, err)
	_, err = conn.Do("UNWATCH")
	require.NoError(t, err)
	require.NoError(t, conn.Close())

	// A Conn: MULTI ... EXEC.
	tg = tags[3]
	conn = c.Conn()
	defer conn.Close()
	_, err = conn.Do("MULTI")
	require.NoError(t, err)
	_, qerr := conn.Do("SORT", tg+"list", "BY", tg+"w_*")
	reply, err = conn.Do("EXEC")
	if qerr != nil {
		check("Conn SORT BY in MULTI", nil, qerr)
		assert.Error(t, err, "EXEC after a refused command")
	} else {
		require.NoError(t, err)
		vs, verr := redis.Values(reply, nil)
		require.NoError(t, verr)
		require.Len(t, vs, 1)
		check("Conn SORT BY in MULTI", vs[0], nil)
	}
}
