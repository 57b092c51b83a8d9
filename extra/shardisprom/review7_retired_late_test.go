package shardisprom_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// review7Router sends the keys of "b:" to node b while it is listed,
// every other key to node a. Dropping b takes it out of Nodes: the client
// retires it at its next health tick.
type review7Router struct {
	a, b    shard.Node
	dropped atomic.Bool
}

func (r *review7Router) Route(key string) (shard.Node, error) {
	if strings.HasPrefix(key, "b:") {
		return r.b, nil // a stale route, once dropped: it still answers
	}
	return r.a, nil
}

func (r *review7Router) Nodes() []shard.Node {
	if r.dropped.Load() {
		return []shard.Node{r.a}
	}
	return []shard.Node{r.a, r.b}
}

// A command in flight on a node when the client retires it (here a BLPOP
// blocked on a node that the user's Router stops listing) completes after
// the NodeRetired that deleted the node's duration series: its
// observation created them again, and nothing deleted them after that. An
// attempt that started before the node was retired is no longer
// observed; one that starts later (the node is listed again) is.
func TestReview7DurationsStayGoneAfterALateCommand(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	d := shardisprom.NewDurations(nil, nil)
	retired := make(chan string, 8)
	r := &review7Router{a: shard.Node{Name: "a", Addr: servers[0].Addr}, b: shard.Node{Name: "b", Addr: servers[1].Addr}}
	cfg := shard.Config{
		Router: r,
		Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: 10 * time.Second},
		Health: shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 2, Timeout: time.Second},
		Hooks: shard.JoinHooks(d.Hooks(), &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
			if ev.Kind == shard.NodeRetired {
				retired <- ev.Node.Addr
			}
		}}),
	}
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	gone := servers[1]
	for _, k := range []string{"a:x", "b:x"} {
		_, err = c.Do(ctx, "GET", k)
		require.NoError(t, err)
	}
	require.True(t, hasSeries(d, gone.Addr))

	// A BLPOP blocked on the node that leaves.
	blpop := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "BLPOP", "b:list", 3)
		blpop <- err
	}()
	require.Eventually(t, func() bool {
		info, err := gone.Do("INFO", "clients")
		return err == nil && strings.Contains(info, "blocked_clients:1\r\n")
	}, 10*time.Second, 10*time.Millisecond, "the BLPOP blocks on %s", gone.Addr)

	r.dropped.Store(true)
	select {
	case addr := <-retired:
		require.Equal(t, gone.Addr, addr)
	case <-time.After(20 * time.Second):
		t.Fatal("no NodeRetired")
	}
	require.False(t, hasSeries(d, gone.Addr), "deleted when retired")
	select {
	case err := <-blpop:
		assert.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the BLPOP did not end")
	}
	assert.False(t, hasSeries(d, gone.Addr), "the late BLPOP created the retired node's series again")
	assert.True(t, hasSeries(d, servers[0].Addr), "the series of the node that stays are kept")

	// Listed again: its commands are observed again.
	r.dropped.Store(false)
	require.Eventually(t, func() bool {
		_, err := c.Do(ctx, "GET", "b:x")
		return err == nil && hasSeries(d, gone.Addr)
	}, 20*time.Second, 20*time.Millisecond, "a command on the node listed again is observed")
}
