package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview14HungOldNodeIsFoundUnderTrafficAtTheNewNode: the stall
// watch read the new node's totals (INFO stats: bytes read, commands
// run), which every client's traffic moves: while production clients
// kept writing to the new node, an old node stopped (SIGSTOP) in the
// middle of a MIGRATE of two 8 MB values was never found out, and the
// Move waited the whole MIGRATE wait (about 130 s at a Timeout of
// 500 ms). The watch must follow the MIGRATE's own connection, so that
// the Move fails soon with ErrOldNodeStalled naming the old node while
// another client writes to the new node all along.
func TestReview14HungOldNodeIsFoundUnderTrafficAtTheNewNode(t *testing.T) {
	const n, size = 2, 8 << 20
	const timeout = 500 * time.Millisecond
	servers, from, to := moveAll(t)
	fillRandomValues(t, servers[0].Addr, "ht:", n, size)

	// Another client writes to the new node all along.
	trafficConn, err := redis.Dial("tcp", servers[1].Addr)
	require.NoError(t, err)
	defer trafficConn.Close()
	stopTraffic := make(chan struct{})
	var wg sync.WaitGroup
	var writes int
	var trafficErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond) // the traffic's pace: what is simulated
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stopTraffic:
				return
			case <-tick.C:
			}
			if _, err := trafficConn.Do("SET", fmt.Sprintf("other:%d", i%100), i); err != nil {
				trafficErr = err
				return
			}
			writes++
		}
	}()
	defer func() {
		close(stopTraffic)
		wg.Wait()
	}()

	paused := make(chan error, 1)
	proxy := startSlowReplyProxy(t, servers[1].Addr, 0, func() { paused <- servers[0].Pause() })
	t.Cleanup(func() { servers[0].Resume() })
	// Without a bound of its own the Move would wait minutes: the old
	// node resumes after giveUp, and the Move then completes, late.
	const giveUp = 25 * time.Second
	resumed := time.AfterFunc(giveUp, func() { servers[0].Resume() })
	defer resumed.Stop()
	start := time.Now()
	// The proxy's fault is for the mover's MIGRATE, not the arming's probe.
	_, err = reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true,
		Addrs: map[string]string{servers[1].Addr: proxy.addr}, SkipProbe: true, Timeout: timeout, Batch: n, MaxBlock: time.Minute})
	took := time.Since(start)
	require.NoError(t, <-paused, "stopping the old node")
	require.NoError(t, servers[0].Resume())
	close(stopTraffic)
	wg.Wait()
	stopTraffic = make(chan struct{})
	require.NoError(t, trafficErr, "the other client's writes")
	t.Logf("after %v (%d writes by another client meanwhile): %v", took, writes, err)
	require.Greater(t, writes, 10, "the other client kept writing")
	assert.Less(t, took, 12*timeout+3*time.Second, "the Move waited for a hung old node")
	require.Error(t, err)
	assert.ErrorIs(t, err, reshard.ErrOldNodeStalled)
	var ne *shard.NodeError
	if assert.True(t, errors.As(err, &ne), "a *shard.NodeError") {
		assert.Equal(t, servers[0].Addr, ne.Node.Addr, "the node named")
	}
}
