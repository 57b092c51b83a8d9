package reshard_test

import (
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
)

// newRawConn is a plain connection to s, closed with the test: for
// checking a server's data around the mover, not through it.
func newRawConn(t *testing.T, s *redistest.Server) redis.Conn {
	t.Helper()
	c, err := redis.Dial("tcp", s.Addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}
