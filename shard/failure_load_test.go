package shard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A shard killed while 8 goroutines run single commands and pipelines:
// only its keys fail, each with a *NodeError naming it, none waits longer
// than the configured timeouts, and the other shards' keys never fail.
func TestShardKilledMidRun(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	c := newClient(t, ringConfig(servers))
	dead := servers[1]
	var (
		stop      atomic.Bool
		wg        sync.WaitGroup
		mu        sync.Mutex
		onDead    int
		elsewhere []error
		slowest   time.Duration
		ops       atomic.Int64
	)
	record := func(key string, err error, took time.Duration) {
		node, _ := c.Router().Route(key)
		mu.Lock()
		defer mu.Unlock()
		slowest = max(slowest, took)
		if err == nil {
			return
		}
		var ne *shard.NodeError
		if node.Addr == dead.Addr && errors.As(err, &ne) && ne.Node.Addr == dead.Addr {
			onDead++
			return
		}
		elsewhere = append(elsewhere, fmt.Errorf("key %s on %s: %w", key, node, err))
	}
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			ctx := context.Background()
			for i := 0; !stop.Load(); i++ {
				k := fmt.Sprintf("mid:%d:%d", g, i%500)
				start := time.Now()
				if i%5 == 0 {
					p := c.Pipeline()
					keys := make([]string, 10)
					for j := range keys {
						keys[j] = fmt.Sprintf("mid:%d:%d", g, (i+j)%500)
						p.Send("SET", keys[j], i)
					}
					res, err := p.Exec(ctx)
					if err == nil && len(res) != len(keys) {
						err = fmt.Errorf("%d results for %d commands", len(res), len(keys))
					}
					if err != nil { // never t.Fatal from a worker: recorded, checked below
						mu.Lock()
						elsewhere = append(elsewhere, fmt.Errorf("pipeline: %w", err))
						mu.Unlock()
						continue
					}
					for j, r := range res {
						record(keys[j], r.Err, time.Since(start))
					}
				} else {
					_, err := c.Do(ctx, "SET", k, i)
					record(k, err, time.Since(start))
				}
				ops.Add(1)
			}
		}(g)
	}
	waitFor(t, 30*time.Second, "the load to run before the kill", func() bool { return ops.Load() >= 200 })
	require.NoError(t, dead.Kill())
	waitFor(t, 30*time.Second, "commands on the dead shard to fail", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return onDead > 0
	})
	afterKill := ops.Load()
	waitFor(t, 30*time.Second, "the load to go on after the kill", func() bool { return ops.Load() >= afterKill+200 })
	stop.Store(true)
	wg.Wait()

	t.Logf("%d operations, %d failures on the dead shard, slowest %v", ops.Load(), onDead, slowest)
	assert.Positive(t, onDead, "the dead shard's commands failed")
	assert.Empty(t, elsewhere, "no other shard's command failed")
	assert.Less(t, slowest, 4*time.Second, "no operation outlived the 1s timeouts by much (bound for a loaded machine)")
}
