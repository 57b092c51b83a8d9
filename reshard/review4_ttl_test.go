package reshard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDumpMoveKeepsExpiryOfAKeyExpiringNow checks that the DUMP/RESTORE
// path never makes a key with an expiry persistent. PTTL answers 0 for a
// key that expires in the very millisecond it is asked, and RESTORE reads a
// TTL of 0 as "no expiry": such a key would live for ever at its new
// owner. The keys' expiries are spread one every fraction of a millisecond
// over the seconds the paced mover runs, so that many keys are dumped in
// the millisecond they expire. Every key the new owner ends with must
// still have an expiry (or be gone).
func TestDumpMoveKeepsExpiryOfAKeyExpiringNow(t *testing.T) {
	ctx := context.Background()
	servers, from, to := moveAll(t)
	const (
		n      = 20000
		window = 3000 // ms over which the keys expire
	)
	conn, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer conn.Close()
	now, err := redis.Values(conn.Do("TIME"))
	require.NoError(t, err)
	require.Len(t, now, 2)
	sec, err := redis.Int64(now[0], nil)
	require.NoError(t, err)
	usec, err := redis.Int64(now[1], nil)
	require.NoError(t, err)
	start := sec*1000 + usec/1000 + 500 // the first expiry, in server ms
	for i := 0; i < n; i++ {
		require.NoError(t, conn.Send("SET", fmt.Sprintf("exp:%d", i), i, "PXAT", start+int64(i)*window/n))
	}
	require.NoError(t, conn.Flush())
	for i := 0; i < n; i++ {
		_, err := conn.Receive()
		require.NoError(t, err)
	}

	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to, Dump: true, SkipClientCheck: true,
		SkipVerify: true, KeysPerSecond: float64(n) * 1000 / window, Batch: 64})
	require.NoError(t, err)

	dst, err := redis.Dial("tcp", servers[1].Addr)
	require.NoError(t, err)
	defer dst.Close()
	var persistent []string
	cursor := "0"
	for {
		vals, err := redis.Values(dst.Do("SCAN", cursor, "COUNT", 1000))
		require.NoError(t, err)
		require.Len(t, vals, 2)
		cursor, err = redis.String(vals[0], nil)
		require.NoError(t, err)
		keys, err := redis.Strings(vals[1], nil)
		require.NoError(t, err)
		for _, k := range keys {
			ttl, err := redis.Int64(dst.Do("PTTL", k))
			require.NoError(t, err)
			if ttl == -1 {
				persistent = append(persistent, k)
			}
		}
		if cursor == "0" {
			break
		}
	}
	assert.Empty(t, persistent, "keys that had an expiry are persistent at their new owner")
}
