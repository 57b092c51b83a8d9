package shard_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// healthClient is a cluster client that logs the NodeDown and NodeUp
// events of one master, with the operation a test keeps sending through
// it (op) and a count the test keeps of those operations (n).
type healthClient struct {
	name   string
	c      *shard.Client
	op     func(c *shard.Client, key string) error
	upDown upDownLog // NodeDown and NodeUp of the master
	n      atomic.Int64
}

// startHealthCluster starts the cluster of a health-under-traffic test,
// three masters that take a minute to fail one another (the master the
// test makes unhealthy stays a master), and returns it and that master,
// its first. It skips the test in -short mode.
func startHealthCluster(t *testing.T) (*redistest.Cluster, *redistest.Server) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{NodeTimeout: time.Minute})
	return rc, rc.Masters()[0]
}

// openHealthClients sets up the clients of a health-under-traffic test:
// it opens a client of rc for each of clients, logging the NodeDown and
// NodeUp events of master m. A maxRetryWait above zero is set as the
// clients' Cluster.MaxRetryWait.
func openHealthClients(t *testing.T, rc *redistest.Cluster, m *redistest.Server, maxRetryWait time.Duration, clients []*healthClient) {
	t.Helper()
	for _, cl := range clients {
		cfg := clusterConfig(rc.Seeds()...)
		if maxRetryWait > 0 {
			cfg.Cluster.MaxRetryWait = maxRetryWait
		}
		cl.upDown.addr = m.Addr
		cfg.Hooks = &shard.Hooks{NodeState: cl.upDown.record}
		cl.c = newClient(t, cfg)
	}
}

// fillLargeKeys writes n keys key:0 .. key:n-1 of about 1 KB each through c,
// so that reloading the server that holds them takes a while.
func fillLargeKeys(t *testing.T, c *shard.Client, key string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < n; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("%s:%d", key, i), fmt.Sprintf("%d:%01000d", i, 0))
		require.NoError(t, err)
	}
}

// keepBusy runs each(cl, g) over and over from two goroutines per client
// (g is 0 or 1) until stop is called; stop waits for the goroutines.
func keepBusy(clients []*healthClient, each func(cl *healthClient, g int)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, cl := range clients {
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					each(cl, g)
				}
			}()
		}
	}
	return func() {
		close(done)
		wg.Wait()
	}
}

// waitAllDown waits up to d for every client to have logged the master
// down. It asserts nothing: the test checks the logs afterwards.
func waitAllDown(clients []*healthClient, d time.Duration) {
	allDown := func() bool {
		for _, cl := range clients {
			if _, ok, _ := cl.upDown.down(); !ok {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(d); time.Now().Before(deadline) && !allDown(); {
		time.Sleep(20 * time.Millisecond)
	}
}
