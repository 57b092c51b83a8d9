package shard_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reads from replicas while a manual failover swaps a master and its
// replica: no write reaches the caller as a replica's READONLY, every
// INCR that succeeded counted once, and no read fails.
func TestReview20ReplicaReadsAcrossFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	cfg.Cluster.MaxRetryWait = 10 * time.Second
	c := newClient(t, cfg)
	m := rc.Masters()[0]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	key, slot := keyOnMaster(t, rc, m, "r20rfo")

	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		ok       atomic.Int64
		mu       sync.Mutex
		failures []error
	)
	fail := func(err error) {
		mu.Lock()
		failures = append(failures, err)
		mu.Unlock()
	}
	for w := 0; w < 4; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := c.Do(ctx, "INCR", key); err != nil {
					fail(err)
				} else {
					ok.Add(1)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for !stop.Load() {
				if _, err := c.Do(ctx, "GET", key); err != nil {
					fail(err)
				}
			}
		}()
	}
	waitFor(t, 10*time.Second, "some INCRs", func() bool { return ok.Load() > 100 })
	failOverSlot(t, rc, rep, slot)
	at := ok.Load()
	waitFor(t, 10*time.Second, "INCRs after the failover", func() bool { return ok.Load() > at+100 })
	stop.Store(true)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for i, err := range failures {
		if i < 5 {
			t.Logf("failure: %v", err)
		}
	}
	assert.Empty(t, failures)
	got, err := redis.Int64(direct(t, rep.Addr).Do("GET", key))
	require.NoError(t, err)
	assert.Equal(t, ok.Load(), got, "each INCR that succeeded ran once, at a master")
}
