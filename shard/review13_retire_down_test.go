package shard_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// relistRouter places every key on its last node and lists the nodes it
// is given, which the test changes.
type relistRouter struct {
	mu    sync.Mutex
	nodes []shard.Node
}

func (r *relistRouter) set(nodes ...shard.Node) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nodes = nodes
}

func (r *relistRouter) Route(string) (shard.Node, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nodes[len(r.nodes)-1], nil
}

func (r *relistRouter) Nodes() []shard.Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]shard.Node(nil), r.nodes...)
}

// addrEvents records the NodeState events of one address.
type addrEvents struct {
	mu    sync.Mutex
	addr  string
	kinds []shard.NodeEventKind
}

func (l *addrEvents) note(ev shard.NodeEvent) {
	if ev.Node.Addr != l.addr {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kinds = append(l.kinds, ev.Kind)
}

func (l *addrEvents) get() []shard.NodeEventKind {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]shard.NodeEventKind(nil), l.kinds...)
}

func (l *addrEvents) has(k shard.NodeEventKind) bool {
	for _, got := range l.get() {
		if got == k {
			return true
		}
	}
	return false
}

// TestReview13NodeRelistedWhileDownIsReportedDown: a node that was down
// when it left the topology (its NodeRetired closes its NodeDown) and is
// listed again while still down is held down until a health check
// answers; its commands fail fast with ErrNodeDown. The NodeState hook
// is told so with a NodeDown, so that the NodeUp that follows when the
// server answers again closes a NodeDown, as every NodeUp does; without
// it a program that follows the events took the node for up while every
// command to it failed fast.
func TestReview13NodeRelistedWhileDownIsReportedDown(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	a := shard.Node{Name: "a", Addr: servers[0].Addr}
	b := shard.Node{Name: "b", Addr: servers[1].Addr}
	r := &relistRouter{}
	r.set(a, b)
	log := &addrEvents{addr: b.Addr}
	c := newClient(t, shard.Config{
		Router: r,
		Pool:   ringConfig(servers).Pool,
		Health: shard.HealthOptions{Interval: 20 * time.Millisecond, FailureLimit: 1, Timeout: time.Second},
		Hooks:  &shard.Hooks{NodeState: log.note},
	})

	require.NoError(t, servers[1].Kill())
	waitFor(t, 5*time.Second, "b marked down", func() bool { return log.has(shard.NodeDown) })
	r.set(a)
	waitFor(t, 5*time.Second, "b retired", func() bool { return log.has(shard.NodeRetired) })
	r.set(a, b)
	waitFor(t, 5*time.Second, "b listed again", func() bool { return len(nodeStats(c, b.Addr)) > 0 })
	st := nodeStats(c, b.Addr)
	require.Len(t, st, 1)
	require.True(t, st[0].Down, "b is held down until a health check answers")
	_, err := c.Do(ctx, "GET", "review13:k")
	require.ErrorIs(t, err, shard.ErrNodeDown)
	require.NoError(t, servers[1].Restart())
	waitFor(t, 5*time.Second, "b up", func() bool { return log.has(shard.NodeUp) })

	kinds := log.get()
	require.GreaterOrEqual(t, len(kinds), 3)
	require.Equal(t, []shard.NodeEventKind{shard.NodeDown, shard.NodeRetired}, kinds[:2])
	up := len(kinds) - 1
	require.Equal(t, shard.NodeUp, kinds[up], "events %v", kinds)
	require.Equal(t, shard.NodeDown, kinds[up-1], "the NodeUp closes a NodeDown; events %v", kinds)
}
