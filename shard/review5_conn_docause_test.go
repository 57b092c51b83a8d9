package shard_test

import (
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview5ConnDoReportsItsOwnRoutingFailure: when a Conn's Do command
// itself fails to route (ErrNoKey, a *ConnStateError, ...), Do returns
// that failure even when a reply read before it was a server error. Do
// returned the earlier server error instead: the caller saw a WRONGTYPE
// or "not an integer" for a command that never reached any server, and
// errors.Is(err, shard.ErrNoKey) was false.
func TestReview5ConnDoReportsItsOwnRoutingFailure(t *testing.T) {
	c, servers := startRing(t, 1)
	_, err := servers[0].Do("SET", "r5c:text", "abc")
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		args []any
		want func(t *testing.T, err error)
	}{
		{"DBSIZE", nil, func(t *testing.T, err error) { require.ErrorIs(t, err, shard.ErrNoKey) }},
		{"SELECT", []any{5}, func(t *testing.T, err error) {
			var cse *shard.ConnStateError
			require.ErrorAs(t, err, &cse)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := c.Conn()
			defer conn.Close()
			require.NoError(t, conn.Send("INCR", "r5c:text")) // a server error reply
			reply, err := conn.Do(tc.name, tc.args...)
			require.Nil(t, reply)
			require.Error(t, err)
			_, isReply := err.(redis.Error)
			require.False(t, isReply, "Do's error is the earlier INCR's reply: %v", err)
			tc.want(t, err)
			// The Conn stays usable.
			got, err := redis.String(conn.Do("GET", "r5c:text"))
			require.NoError(t, err)
			require.Equal(t, "abc", got)
		})
	}
}
