package reshard_test

import (
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"
)

// fillRandomValues writes n keys prefix0 ... prefix(n-1) of size random
// bytes each to the server at addr (random: DUMP's payload is not
// compressed away, so a MIGRATE of them takes as long as their size says).
func fillRandomValues(t *testing.T, addr, prefix string, n, size int) {
	t.Helper()
	conn, err := redis.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	value := make([]byte, size)
	_, err = rand.Read(value)
	require.NoError(t, err)
	for i := range n {
		_, err = conn.Do("SET", fmt.Sprintf("%s%d", prefix, i), value)
		require.NoError(t, err)
	}
}
