package shard_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// While one ring shard is paused (alive to the kernel, answering
// nothing) and many callers wait on its keys, the other shards' keys
// keep their latency on every way of sending: single commands (through
// the automatic pipeline when callers overlap), and pipelines that mix
// keys of the paused shard with others only fail the paused shard's part.
func TestReview20RingPausedShardLeavesOthersFast(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	c := newClient(t, cfg)
	keys := keysByShard(t, c, 20)
	paused := servers[1]

	ctx := context.Background()
	// Warm the pools: every shard has connections before the pause.
	for _, ks := range keys {
		for _, k := range ks {
			_, err := c.Do(ctx, "SET", k, "v")
			require.NoError(t, err)
		}
	}
	pauseUntilCleanup(t, paused)

	var stuckErrs atomic.Int32
	stop := loopWorkers(8, func(g, i int) {
		k := keys[paused.Addr][(g+i)%len(keys[paused.Addr])]
		if _, err := c.Do(ctx, "GET", k); err != nil {
			var ne *shard.NodeError
			if errors.As(err, &ne) && ne.Node.Addr == paused.Addr {
				stuckErrs.Add(1)
			}
		}
	})

	var mu sync.Mutex
	var lat []time.Duration
	var others sync.WaitGroup
	bad := make(chan error, 100)
	for addr, ks := range keys {
		if addr == paused.Addr {
			continue
		}
		for g := range 4 {
			others.Add(1)
			go func() {
				defer others.Done()
				for i := range 100 {
					start := time.Now()
					_, err := c.Do(ctx, "GET", ks[(g+i)%len(ks)])
					d := time.Since(start)
					if err != nil {
						select {
						case bad <- err:
						default:
						}
						return
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}()
		}
	}
	others.Wait()
	// A pipeline that mixes keys: only the paused shard's entries fail.
	p := c.Pipeline()
	var order []string
	for _, ks := range keys {
		p.Send("GET", ks[0])
		order = append(order, ks[0])
	}
	res, perr := p.Exec(ctx)
	stop()
	close(bad)
	for err := range bad {
		t.Errorf("a key of a live shard failed: %v", err)
	}
	require.NoError(t, perr)
	require.Len(t, res, len(order))
	for i, k := range order {
		node, err := c.Router().Route(k)
		require.NoError(t, err)
		if node.Addr == paused.Addr {
			assert.Error(t, res[i].Err, k)
		} else {
			assert.NoError(t, res[i].Err, k)
		}
	}
	require.Len(t, lat, 2*4*100)
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	t.Logf("live shards: p50 %v p99 %v max %v; %d errors of the paused shard", lat[len(lat)/2], p99, lat[len(lat)-1], stuckErrs.Load())
	assert.Less(t, p99, 250*time.Millisecond, "live shards slowed down by a paused one")
}
