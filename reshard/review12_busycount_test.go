package reshard_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview12BusyKeysAreCountedOnce: keys that the new owner already
// has make their batch's MIGRATE answer BUSYKEY, after which the mover
// settles the batch's keys one by one. The report (Moved, Busy, Flows)
// and the last progress must count each key once, as the servers hold
// them: every key at the new node, the new node's copy of each busy key
// kept, none left at the old node.
func TestReview12BusyKeysAreCountedOnce(t *testing.T) {
	for _, dump := range []bool{false, true} {
		t.Run(fmt.Sprintf("dump=%v", dump), func(t *testing.T) {
			const n = 2000
			servers, from, to := moveAll(t)
			fill(t, from, "busy", n)
			newConn, err := redis.Dial("tcp", servers[1].Addr)
			require.NoError(t, err)
			defer newConn.Close()
			wantBusy := 0
			for i := 0; i < n; i += 7 { // spread over every batch
				_, err := newConn.Do("SET", fmt.Sprintf("busy:%d", i), "new")
				require.NoError(t, err)
				wantBusy++
			}
			var mu sync.Mutex
			var last reshard.Progress
			rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true,
				Dump: dump, Batch: 100, Finish: true, Progress: func(p reshard.Progress) {
					mu.Lock()
					last = p
					mu.Unlock()
				}})
			require.NoError(t, err)
			wantMoved := int64(n - wantBusy)
			assert.Equal(t, wantMoved, rep.Moved, "Moved")
			assert.EqualValues(t, wantBusy, rep.Busy, "Busy")
			assert.EqualValues(t, n, rep.Scanned, "Scanned")
			var flowKeys int64
			for _, f := range rep.Flows {
				flowKeys += f.Keys
			}
			assert.Equal(t, wantMoved, flowKeys, "the flows' keys")
			mu.Lock()
			assert.True(t, last.Done, "the last progress")
			assert.Equal(t, wantMoved, last.Moved, "the last progress's Moved")
			assert.EqualValues(t, n, last.Scanned, "the last progress's Scanned")
			mu.Unlock()

			size, err := redis.Int(newConn.Do("DBSIZE"))
			require.NoError(t, err)
			assert.Equal(t, n, size, "keys at the new node")
			oldSize, err := servers[0].Do("DBSIZE")
			require.NoError(t, err)
			assert.Equal(t, "0", oldSize, "keys left at the old node")
			for i := 0; i < n; i += 7 {
				v, err := redis.String(newConn.Do("GET", fmt.Sprintf("busy:%d", i)))
				require.NoError(t, err)
				assert.Equal(t, "new", v, "busy:%d: the new owner's copy", i)
			}
			for i := 1; i < n; i += 7 {
				v, err := redis.String(newConn.Do("GET", fmt.Sprintf("busy:%d", i)))
				require.NoError(t, err)
				assert.Equal(t, strconv.Itoa(i), v, "busy:%d", i)
			}
		})
	}
}
