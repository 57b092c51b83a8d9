package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview16ConnKilledWatchRefusesMulti: a Conn watches a key and reads
// it; the server then closes the watching connection (CLIENT KILL by
// another client). MULTI ... EXEC on the Conn must not be written on that
// connection (its failure would leave EXEC's outcome unknown although
// nothing ran): the transaction is refused before anything of it is sent,
// with an error that says the watch was lost (shard.ErrWatchLost), no
// *UnknownOutcomeError, and the Conn does not run anything again by
// itself: the caller's retry on the same Conn, with a new WATCH, runs.
func TestReview16ConnKilledWatchRefusesMulti(t *testing.T) {
	t.Run("one at a time", func(t *testing.T) { testConnKilledWatch(t, false) })
	t.Run("pipelined", func(t *testing.T) { testConnKilledWatch(t, true) })
}

func testConnKilledWatch(t *testing.T, pipelined bool) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	s := servers[0]
	c := newClient(t, ringConfig(servers))
	const key = "{r16kw}:counter"
	_, err := c.Do(ctx, "SET", key, "10")
	require.NoError(t, err)

	conn := c.Conn()
	defer conn.Close()
	_, err = conn.Do("WATCH", key)
	require.NoError(t, err)
	v, err := redis.Int(conn.Do("GET", key))
	require.NoError(t, err)
	require.Equal(t, 10, v)
	killClientRunning(t, s, "get")

	var multi, incr, exec error
	if pipelined {
		for _, cmd := range [][]any{{"MULTI"}, {"INCR", key}, {"EXEC"}} {
			require.NoError(t, conn.Send(cmd[0].(string), cmd[1:]...))
		}
		require.NoError(t, conn.Flush())
		_, multi = conn.Receive()
		_, incr = conn.Receive()
		_, exec = conn.Receive()
	} else {
		_, multi = conn.Do("MULTI")
		_, incr = conn.Do("INCR", key)
		_, exec = conn.Do("EXEC")
	}
	t.Logf("MULTI: %v\nINCR: %v\nEXEC: %v", multi, incr, exec)
	require.Error(t, exec, "EXEC on the killed watching connection")
	for what, err := range map[string]error{"INCR in MULTI": incr, "EXEC": exec} {
		if !assert.Error(t, err, what) {
			continue
		}
		assert.ErrorIs(t, err, shard.ErrWatchLost, what)
		var uo *shard.UnknownOutcomeError
		assert.False(t, errors.As(err, &uo), "%s: an unknown outcome for a transaction that was never sent: %v", what, err)
		var ne *shard.NodeError
		if assert.ErrorAs(t, err, &ne, what) {
			assert.Equal(t, s.Addr, ne.Node.Addr, what)
		}
	}
	got, err := redis.Int(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	assert.Equal(t, 10, got, "the refused transaction ran its INCR")

	// The caller retries on the same Conn: a fresh WATCH and the
	// transaction run, once.
	_, err = conn.Do("WATCH", key)
	require.NoError(t, err)
	_, err = conn.Do("MULTI")
	require.NoError(t, err)
	_, err = conn.Do("INCR", key)
	require.NoError(t, err)
	r, err := redis.Values(conn.Do("EXEC"))
	require.NoError(t, err)
	require.Len(t, r, 1)
	got, err = redis.Int(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	assert.Equal(t, 11, got)
}
