package e2e

import (
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"
)

func shardAddrs(t Target) []string {
	var out []string
	for _, s := range t.Config.Shards {
		out = append(out, s.Addr)
	}
	return out
}

// dbsize asks one server how many keys it holds.
func dbsize(t *testing.T, addr string) int {
	t.Helper()
	c, err := redis.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	n, err := redis.Int(c.Do("DBSIZE"))
	require.NoError(t, err)
	return n
}
