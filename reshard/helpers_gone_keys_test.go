package reshard_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// goneOnFirstPage is what the page hook of removeHalfOnFirstPage did: once
// records whether it ran, err its first failure, and want the old node's
// MEMORY USAGE of the keys it left for the mover.
type goneOnFirstPage struct {
	once sync.Once
	err  error
	want int64
}

// removeHalfOnFirstPage sets a page hook (reset when t ends) that, the
// first time the mover sorts a page, deletes the even keys prefix:i (i
// below n) from the server at addr, between their SCAN and their MEMORY
// USAGE, and measures the odd ones, which stay. Read the result once the
// move has returned.
func removeHalfOnFirstPage(t *testing.T, addr, prefix string, n int) *goneOnFirstPage {
	t.Helper()
	conn, err := redis.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	g := &goneOnFirstPage{}
	reshard.SetTestHookPage(func(shard.Node) {
		g.once.Do(func() {
			for i := range n {
				k := fmt.Sprintf("%s:%d", prefix, i)
				if i%2 == 0 {
					_, g.err = conn.Do("DEL", k)
				} else {
					var size int64
					size, g.err = redis.Int64(conn.Do("MEMORY", "USAGE", k))
					g.want += size
				}
				if g.err != nil {
					return
				}
			}
		})
	})
	t.Cleanup(func() { reshard.SetTestHookPage(nil) })
	return g
}
