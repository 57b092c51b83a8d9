package shard_test

import (
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"
)

// TestReview5ConnUnwatchInsideMulti: a server queues UNWATCH between
// MULTI and EXEC like any command (EXEC has checked the watched keys
// before it runs). A Conn refused the whole transaction for it with a
// *ConnStateError whose hint sent the caller to "MULTI ... EXEC on
// Client.Conn()", the very thing it was doing.
func TestReview5ConnUnwatchInsideMulti(t *testing.T) {
	c, servers := startRing(t, 1)
	conn := c.Conn()
	defer conn.Close()
	for _, watch := range []bool{false, true} {
		if watch {
			_, err := conn.Do("WATCH", "r5u:k")
			require.NoError(t, err)
		}
		require.NoError(t, conn.Send("MULTI"))
		require.NoError(t, conn.Send("SET", "r5u:k", "v"))
		require.NoError(t, conn.Send("UNWATCH"))
		reply, err := redis.Values(conn.Do("EXEC"))
		require.NoError(t, err)
		require.Equal(t, []any{"OK", "OK"}, reply)
		got, err := servers[0].Do("GET", "r5u:k")
		require.NoError(t, err)
		require.Equal(t, "v", got)
		_, err = servers[0].Do("DEL", "r5u:k")
		require.NoError(t, err)
	}
}
