package shard_test

import (
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A Sentinel shard's node events name the server they are about in
// ServerAddr, as its command and pipeline events do: its node's address
// names the shard ("sentinel/<name>"), and an observer keyed by server
// (a metric's server.address) had only that. The master's death is
// reported down at the old master's address, and the failover as the
// replica promoted and the shard up again at the new master's; every one
// of them names the shard's node, as the shard's other events do.
func TestReview11SentinelNodeEventsCarryTheServerAddress(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	old, next := shardServers(t, set, 0)
	var (
		mu     sync.Mutex
		events []shard.NodeEvent
	)
	cfg := sentinelConfig(set)
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}}
	c := newClient(t, cfg)
	key := c.Nodes()[0].Addr // the shard's node

	find := func(kind shard.NodeEventKind) (shard.NodeEvent, bool) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range events {
			if ev.Kind == kind {
				return ev, true
			}
		}
		return shard.NodeEvent{}, false
	}
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the shard marked down, the replica promoted and the shard up", func() bool {
		_, down := find(shard.NodeDown)
		_, promoted := find(shard.ReplicaPromoted)
		_, up := find(shard.NodeUp)
		return down && promoted && up
	})
	want := map[shard.NodeEventKind]struct{ node, server string }{
		shard.NodeDown:        {key, old.Addr},
		shard.ReplicaPromoted: {key, next.Addr},
		shard.NodeUp:          {key, next.Addr},
	}
	for kind, w := range want {
		ev, _ := find(kind)
		if ev.Node.Addr != w.node || ev.ServerAddr != w.server {
			t.Errorf("%s event: Node.Addr %q, ServerAddr %q; want %q, %q (%v)", kind, ev.Node.Addr, ev.ServerAddr, w.node, w.server, ev)
		}
	}
}
