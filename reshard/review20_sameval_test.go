package reshard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview20NewNodeCopyReEncodedCountsMoved: a key already at the new
// node with the very value and expiry of the old copy (an earlier run
// restored it and lost its delete) counts as moved, not as a key the new
// owner had (Busy). The new node holds it in another encoding (its
// hash-max-listpack-entries is lower: RESTORE re-encodes the hash), so
// the two DUMP payloads differ while the value is the same; both the
// MIGRATE path and the DUMP/RESTORE path must compare by value.
func TestReview20NewNodeCopyReEncodedCountsMoved(t *testing.T) {
	for _, dump := range []bool{false, true} {
		t.Run(fmt.Sprintf("dump=%v", dump), func(t *testing.T) {
			ctx := context.Background()
			servers, from, to := moveAll(t)
			oldConn := newRawConn(t, servers[0])
			newConn := newRawConn(t, servers[1])

			args := redis.Args{"h"}
			for i := range 20 {
				args = args.Add(fmt.Sprintf("f%d", i), fmt.Sprintf("v%d", i))
			}
			_, err := oldConn.Do("HSET", args...)
			require.NoError(t, err)
			_, err = newConn.Do("CONFIG", "SET", "hash-max-listpack-entries", "4")
			require.NoError(t, err)
			payload, err := redis.Bytes(oldConn.Do("DUMP", "h"))
			require.NoError(t, err)
			_, err = newConn.Do("RESTORE", "h", 0, payload)
			require.NoError(t, err)
			theirs, err := redis.Bytes(newConn.Do("DUMP", "h"))
			require.NoError(t, err)
			require.NotEqual(t, payload, theirs, "the new node's copy must be re-encoded for this test")
			enc, err := redis.String(newConn.Do("OBJECT", "ENCODING", "h"))
			require.NoError(t, err)
			require.Equal(t, "hashtable", enc)

			rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true,
				Dump: dump, MaxBlock: time.Minute, Timeout: 2 * time.Second})
			require.NoError(t, err)
			require.NotNil(t, rep)
			assert.EqualValues(t, 1, rep.Moved, "Moved")
			assert.EqualValues(t, 0, rep.Busy, "Busy")

			o, err := redis.Int(oldConn.Do("EXISTS", "h"))
			require.NoError(t, err)
			assert.Zero(t, o, "left at the old node")
			n, err := redis.Int(newConn.Do("HLEN", "h"))
			require.NoError(t, err)
			assert.Equal(t, 20, n, "fields at the new node")
			size, err := redis.Int(newConn.Do("DBSIZE"))
			require.NoError(t, err)
			assert.Equal(t, 1, size, "keys at the new node (no scratch key left)")
		})
	}
}
