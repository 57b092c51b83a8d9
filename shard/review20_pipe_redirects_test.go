package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pipeline whose commands meet MOVED, ASK and TRYAGAIN for keys of
// different slots in one batch: every reply lands at its own position,
// and no INCR runs twice.
func TestReview20PipelineMixedRedirectsOnce(t *testing.T) {
	ctx := context.Background()
	rc := clusterForTest(t)
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.MaxRetryWait = 300 * time.Millisecond
	m := rc.Masters()
	require.Len(t, m, 3)
	a, b, cc := m[0], m[1], m[2]
	for _, mode := range []struct {
		name string
		auto bool
	}{{"pooled", false}, {"autopipe", true}} {
		t.Run(mode.name, func(t *testing.T) {
			cfg := cfg
			cfg.DisableAutoPipeline = !mode.auto
			c := newClient(t, cfg)
			pre := "r20mix" + mode.name
			kMoved, sMoved := emptySlotKeyOnMaster(t, rc, a, pre+"mv")
			kAsk, sAsk := emptySlotKeyOnMaster(t, rc, a, pre+"ask")
			kTry, sTry := emptySlotKeyOnMaster(t, rc, a, pre+"try")
			require.NotEqual(t, sMoved, sAsk)
			require.NotEqual(t, sMoved, sTry)
			require.NotEqual(t, sAsk, sTry)
			kB, _ := keyOnMaster(t, rc, b, pre+"b")
			kC, _ := keyOnMaster(t, rc, cc, pre+"c")
			// kTry's first key exists at the source: MSET of both
			// keeps meeting TRYAGAIN.
			_, err := c.Do(ctx, "SET", kTry+"x", "1")
			require.NoError(t, err)
			t.Cleanup(func() { _, _ = c.Do(ctx, "DEL", kTry+"x", kB, kC) })

			assignSlot(t, sMoved, a, b)
			t.Cleanup(func() {
				_, _ = direct(t, b.Addr).Do("DEL", kMoved)
				assignSlot(t, sMoved, b, a)
			})
			migratingSlot(t, sAsk, a, cc)
			migratingSlot(t, sTry, a, cc)
			t.Cleanup(func() {
				conn := direct(t, cc.Addr)
				_, _ = conn.Do("ASKING")
				_, _ = conn.Do("DEL", kAsk)
			})

			p := c.Pipeline()
			p.Send("INCR", kMoved)                       // 0: MOVED to b
			p.Send("INCR", kB)                           // 1: served
			p.Send("INCR", kAsk)                         // 2: ASK to cc
			p.Send("MSET", kTry+"x", "2", kTry+"y", "2") // 3: TRYAGAIN until the wait ends
			p.Send("INCRBY", kMoved, 10)                 // 4: MOVED to b
			p.Send("INCRBY", kAsk, 100)                  // 5: ASK to cc
			p.Send("INCRBY", kC, 1000)                   // 6: served
			p.Send("GET", kAsk)                          // 7: ASK to cc
			p.Send("INCRBY", kB, 10000)                  // 8: served
			res, err := p.Exec(ctx)
			require.NoError(t, err)
			require.Len(t, res, 9)
			want := []any{int64(1), int64(1), int64(1), nil, int64(11), int64(101), int64(1000), []byte("101"), int64(10001)}
			for i, w := range want {
				if i == 3 {
					assert.ErrorIs(t, res[i].Err, shard.ErrRetryBudget, "result %d", i)
					continue
				}
				if assert.NoError(t, res[i].Err, "result %d", i) {
					assert.Equal(t, w, res[i].Reply, "result %d", i)
				}
			}
			got, err := redis.Int(direct(t, b.Addr).Do("GET", kMoved))
			require.NoError(t, err)
			assert.Equal(t, 11, got, "the moved slot's INCRs ran once each at its new owner")
			conn := direct(t, cc.Addr)
			_, err = conn.Do("ASKING")
			require.NoError(t, err)
			got, err = redis.Int(conn.Do("GET", kAsk))
			require.NoError(t, err)
			assert.Equal(t, 101, got, "the asked INCRs ran once each at the importing node")
			n, err := redis.Int(direct(t, a.Addr).Do("CLUSTER", "COUNTKEYSINSLOT", sAsk))
			require.NoError(t, err)
			assert.Zero(t, n, "nothing was written at the migrating node")
		})
	}
}
