package shard_test

import (
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"
)

// TestReview5ConnExecWithoutMultiKeepsTheWatch: on a server, EXEC or
// DISCARD without MULTI is refused and the WATCH stays armed. A Conn
// dropped its WATCH there (it let the watching connection go as if EXEC
// had run), so the next MULTI ... EXEC ran unguarded over a change of
// the watched key: a lost update where a server aborts the transaction.
func TestReview5ConnExecWithoutMultiKeepsTheWatch(t *testing.T) {
	c, servers := startRing(t, 1)
	for _, stray := range []string{"EXEC", "DISCARD"} {
		t.Run(stray, func(t *testing.T) {
			_, err := servers[0].Do("SET", "r5x:k", "start")
			require.NoError(t, err)
			conn := c.Conn()
			defer conn.Close()
			_, err = conn.Do("WATCH", "r5x:k")
			require.NoError(t, err)
			_, err = conn.Do(stray)
			require.Error(t, err, "%s without MULTI", stray)
			_, err = servers[0].Do("SET", "r5x:k", "other") // another client's write
			require.NoError(t, err)
			_, err = conn.Do("MULTI")
			require.NoError(t, err)
			_, err = conn.Do("SET", "r5x:k", "mine")
			require.NoError(t, err)
			reply, err := conn.Do("EXEC")
			require.NoError(t, err)
			require.Nil(t, reply, "EXEC ran though the watched key changed")
			got, err := servers[0].Do("GET", "r5x:k")
			require.NoError(t, err)
			require.Equal(t, "other", got)
			// The watch ended with that EXEC: the next transaction runs.
			_, err = conn.Do("MULTI")
			require.NoError(t, err)
			_, err = conn.Do("SET", "r5x:k", "mine")
			require.NoError(t, err)
			reply, err = redis.Values(conn.Do("EXEC"))
			require.NoError(t, err)
			require.Equal(t, []any{"OK"}, reply)
		})
	}
}
