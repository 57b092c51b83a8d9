package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Existing redigo code works unchanged on the routed connection.
func TestConnIsRedigoCompatible(t *testing.T) {
	c, servers := startRing(t, 3)
	conn := c.Conn()
	defer conn.Close()

	_, err := conn.Do("SET", "greeting", "hello")
	require.NoError(t, err)
	s, err := redis.String(conn.Do("GET", "greeting"))
	require.NoError(t, err)
	assert.Equal(t, "hello", s)

	for i := 0; i < 100; i++ {
		require.NoError(t, conn.Send("SET", fmt.Sprintf("rc:%d", i), i))
	}
	require.NoError(t, conn.Flush())
	for i := 0; i < 100; i++ {
		v, err := redis.String(conn.Receive())
		require.NoError(t, err)
		assert.Equal(t, "OK", v)
	}
	// Receive without an explicit Flush flushes, as redigo users expect.
	require.NoError(t, conn.Send("GET", "rc:7"))
	v, err := redis.Int(conn.Receive())
	require.NoError(t, err)
	assert.Equal(t, 7, v)

	// Do with queued commands returns the last reply.
	require.NoError(t, conn.Send("INCR", "rc:1"))
	v, err = redis.Int(conn.Do("INCR", "rc:2"))
	require.NoError(t, err)
	assert.Equal(t, 3, v)

	// The keys really are spread over the servers.
	nonEmpty := 0
	for _, srv := range servers {
		if n, _ := srv.Do("DBSIZE"); n != "0" {
			nonEmpty++
		}
	}
	assert.Equal(t, 3, nonEmpty)

	cwc, ok := conn.(redis.ConnWithContext)
	require.True(t, ok)
	_, err = cwc.DoContext(context.Background(), "SET", "ctx", "1")
	require.NoError(t, err)

	require.NoError(t, conn.Close())
	assert.Error(t, conn.Err())
	_, err = conn.Do("GET", "greeting")
	assert.Error(t, err)
}

// redigo's Script helper works through the routed connection.
func TestConnWithRedigoScript(t *testing.T) {
	c, _ := startRing(t, 3)
	conn := c.Conn()
	defer conn.Close()
	script := redis.NewScript(1, `return redis.call("SET", KEYS[1], ARGV[1])`)
	for i := 0; i < 20; i++ {
		_, err := script.Do(conn, fmt.Sprintf("sc:%d", i), i)
		require.NoError(t, err)
	}
	v, err := redis.Int(conn.Do("GET", "sc:13"))
	require.NoError(t, err)
	assert.Equal(t, 13, v)
}
