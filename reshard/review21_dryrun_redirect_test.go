package reshard_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// TestReview21DryRunCountsARedirectedKeyOnce: the keys of a slot leave
// their master of the old cluster (MOVED: moved by its operator; ASK:
// being moved) after that master's page is sorted, before MEMORY USAGE,
// and the master they go to is scanned after they arrived; some other
// keys of the page are deleted meanwhile. A dry run measured the
// redirected keys where they went and counted them as keys it would move
// from the first master, and the second master's scan counted them
// again: Moved, Bytes and the flows ran over by the slot's keys. Each key
// there is now counted once, and a deleted key not at all.
func TestReview21DryRunCountsARedirectedKeyOnce(t *testing.T) {
	for _, tt := range []struct {
		name string
		hook func(r *fallbackRig) error
	}{
		{"slot moved (MOVED)", func(r *fallbackRig) error { return r.moveSlot() }},
		{"slot being moved (ASK)", func(r *fallbackRig) error { return r.halfMove(r.tagKeys) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newFallbackRig(t)
			// Two keys of the owner that are not of the slot: deleted.
			gone := map[string]bool{}
			for _, k := range r.keys[len(r.tagKeys):] {
				m, err := r.old.MasterOfSlot(cluster.Slot(k))
				require.NoError(t, err)
				if m.Addr == r.owner.Addr && len(gone) < 2 {
					gone[k] = true
				}
			}
			require.Len(t, gone, 2, "keys of the slot's master to delete")
			// Each key's size where it is before the run.
			var want int64
			for _, k := range r.keys {
				m, err := r.old.MasterOfSlot(cluster.Slot(k))
				require.NoError(t, err)
				size, err := redis.Int64(newRawConn(t, m).Do("MEMORY", "USAGE", k))
				require.NoError(t, err)
				require.Positive(t, size, k)
				if !gone[k] {
					want += size
				}
			}
			moved := make(chan struct{})
			var once sync.Once
			var hookErr error
			reshard.SetTestHookPage(func(n shard.Node) {
				if n.Addr != r.owner.Addr {
					return
				}
				once.Do(func() {
					defer close(moved)
					if hookErr = tt.hook(r); hookErr != nil {
						return
					}
					for k := range gone {
						if _, hookErr = r.owner.Do("DEL", k); hookErr != nil {
							return
						}
					}
				})
			})
			defer reshard.SetTestHookPage(nil)
			// The master the keys go to is scanned once they are there.
			var waited sync.Once
			waitedOK := true
			reshard.SetTestHookScan(func(n shard.Node) {
				if n.Addr != r.other.Addr {
					return
				}
				waited.Do(func() {
					select {
					case <-moved:
					case <-time.After(60 * time.Second):
						waitedOK = false
					}
				})
			})
			defer reshard.SetTestHookScan(nil)

			rep, err := reshard.Move(context.Background(), reshard.Options{From: r.from, To: r.to, SkipClientCheck: true, ScanCount: 1000, DryRun: true})
			require.NoError(t, hookErr)
			require.EqualValues(t, 1, callsDone(&once), "the slot moved during the run")
			require.True(t, waitedOK, "the slot's keys arrived before their new master was scanned")
			require.NoError(t, err)
			assert.EqualValues(t, len(r.keys)-len(gone), rep.Moved, "Report.Moved: every key there, once")
			assert.Equal(t, want, rep.Bytes, "Report.Bytes: the bytes of every key there, once")
			assert.EqualValues(t, len(r.keys), rep.Scanned, "Report.Scanned: every key scanned, once")
			var keys, bytes int64
			for _, f := range rep.Flows {
				keys += f.Keys
				bytes += f.Bytes
			}
			assert.EqualValues(t, len(r.keys)-len(gone), keys, "Flow.Keys, summed")
			assert.Equal(t, want, bytes, "Flow.Bytes, summed")
			// Nothing moved.
			for _, s := range r.servers {
				n, err := redis.Int(newRawConn(t, s).Do("DBSIZE"))
				require.NoError(t, err)
				assert.Zero(t, n, "a dry run moved keys to %s", s.Addr)
			}
		})
	}
}
