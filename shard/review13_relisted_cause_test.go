package shard

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/stretchr/testify/require"
)

// TestReview13RelistedNodeDownCarriesItsCause: a node listed again while
// it was down when it retired is down without a NodeDown since its
// NodeRetired (settleNodesLocked sets it so); when a success comes
// before settleNodes reports that NodeDown (reportRelistedDown), the
// success reports it, before its NodeUp. That NodeDown must carry the
// failure that kept the node down: the success cleared it first, and the
// event carried a bare ErrNodeDown.
func TestReview13RelistedNodeDownCarriesItsCause(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	var mu sync.Mutex
	var events []NodeEvent
	c, err := New(context.Background(), Config{
		Shards: []ring.Shard{{Name: "s0", Addr: server.Addr, Weight: 1}},
		Health: HealthOptions{Interval: time.Hour, FailureLimit: 1, Timeout: time.Second},
		Hooks: &Hooks{NodeState: func(ev NodeEvent) {
			mu.Lock()
			events = append(events, ev)
			mu.Unlock()
		}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	i, ok := c.nodes.lookup(server.Addr)
	require.True(t, ok)
	ns := c.nodes.get(i)
	cause := errors.New("connection refused by the test")
	// What settleNodesLocked leaves of a node relisted while down.
	ns.trans.Lock()
	ns.noteCause(cause)
	ns.down.Store(true)
	ns.downUnreported.Store(true)
	ns.trans.Unlock()

	c.noteSuccess(i) // the health check answered before reportRelistedDown ran
	c.reportRelistedDown(i)

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, events, 2, "a NodeDown, then the NodeUp that closes it: %v", events)
	require.Equal(t, NodeDown, events[0].Kind)
	require.ErrorIs(t, events[0].Err, cause, "the NodeDown carries the failure that kept the node down")
	require.NotErrorIs(t, events[0].Err, ErrNodeDown)
	require.Equal(t, NodeUp, events[1].Kind)
	require.False(t, ns.down.Load())
}
