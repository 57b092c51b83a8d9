package reshard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// TestReview20BytesCountKeysThatLeftBeforeTheyWereMeasured: half the
// keys of a page leave the old node (moved by clients on touch, or
// deleted) after its SCAN and before their MEMORY USAGE, which answers
// nil for them: they count no bytes, and the batch's MIGRATE (or DUMP)
// skips them. The bytes of the batch were scaled by the share of its keys
// moved, gone ones included, so Report.Bytes and Flow.Bytes showed half
// the bytes of the keys that did move. They now show all of them.
func TestReview20BytesCountKeysThatLeftBeforeTheyWereMeasured(t *testing.T) {
	for _, dump := range []bool{false, true} {
		t.Run(fmt.Sprintf("dump=%v", dump), func(t *testing.T) {
			const n = 20
			servers, from, to := moveAll(t)
			fillRandomValues(t, servers[0].Addr, "b:", n, 1000)
			conn, err := redis.Dial("tcp", servers[0].Addr)
			require.NoError(t, err)
			defer conn.Close()
			var once sync.Once
			var hookErr error
			var want int64 // the old node's MEMORY USAGE of the keys that stay for the mover
			reshard.SetTestHookPage(func(shard.Node) {
				once.Do(func() {
					for i := range n {
						k := fmt.Sprintf("b:%d", i)
						if i%2 == 0 {
							_, hookErr = conn.Do("DEL", k)
						} else {
							var size int64
							size, hookErr = redis.Int64(conn.Do("MEMORY", "USAGE", k))
							want += size
						}
						if hookErr != nil {
							return
						}
					}
				})
			})
			defer reshard.SetTestHookPage(nil)
			rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 1000, Dump: dump})
			require.NoError(t, hookErr)
			require.NoError(t, err)
			require.EqualValues(t, n/2, rep.Moved)
			require.Greater(t, want, int64(n/2*1000), "precondition: the keys measured")
			assert.Equal(t, want, rep.Bytes, "Report.Bytes: the bytes of the keys moved")
			require.Len(t, rep.Flows, 1)
			assert.Equal(t, want, rep.Flows[0].Bytes, "Flow.Bytes")
		})
	}
}
