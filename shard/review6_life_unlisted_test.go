package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// farRouter is a user's Router that lists one node and sends the keys
// that start with "far:" to another one, which it does not list.
type farRouter struct{ listed, far shard.Node }

func (r farRouter) Route(key string) (shard.Node, error) {
	if strings.HasPrefix(key, "far:") {
		return r.far, nil
	}
	return r.listed, nil
}

func (r farRouter) Nodes() []shard.Node { return []shard.Node{r.listed} }

// TestReview6UnlistedNodeComesBackAfterAnOutage: a user's Router sends
// keys to a node its Nodes does not list. The client serves them (it
// dials the node) but retires the node at the next health tick: it is not
// health-checked. A short outage of that node then marked it down through
// the commands' failures, and with no health check to mark it up again,
// every later command failed fast with ErrNodeDown for good, long after
// the node was back.
func TestReview6UnlistedNodeComesBackAfterAnOutage(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	base := ringConfig(servers)
	listed := shard.Node{Name: "listed", Addr: servers[0].Addr}
	far := shard.Node{Name: "far", Addr: servers[1].Addr}
	c := newClient(t, shard.Config{Router: farRouter{listed: listed, far: far}, Pool: base.Pool, Health: base.Health})
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "far:k", "v")
	require.NoError(t, err)
	// A health tick saw that no topology lists it: retired, out of Stats.
	waitFor(t, 10*time.Second, "the unlisted node to leave Stats", func() bool {
		for _, n := range c.Stats().Nodes {
			if n.Node.Addr == far.Addr {
				return false
			}
		}
		return true
	})

	require.NoError(t, servers[1].Kill())
	for i := 0; i < 2*base.Health.FailureLimit; i++ {
		_, err := c.Do(ctx, "GET", "far:k")
		require.Error(t, err, "the node is stopped")
	}
	require.NoError(t, servers[1].Restart())
	back := time.Now()
	var last error
	waitFor(t, 10*time.Second, "the node back to serve its keys", func() bool {
		_, last = c.Do(ctx, "SET", "far:k", "v2")
		if last != nil && time.Since(back) > 9*time.Second {
			t.Logf("still failing: %v", last)
		}
		return last == nil
	})
	_, err = c.Do(ctx, "GET", "listed:k")
	require.NoError(t, err)
}
