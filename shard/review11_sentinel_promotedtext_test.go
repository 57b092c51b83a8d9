package shard_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// The text of a Sentinel shard's ReplicaPromoted names the servers: the
// replica promoted and the master it replaces. Both nodes of the event
// are the shard (its name), so the text, what a NodeState hook that logs
// the events prints, read "replica shard-0 promoted (replaces shard-0)".
func TestReview11SentinelPromotionTextNamesTheServers(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	old, next := shardServers(t, set, 0)
	var (
		mu    sync.Mutex
		texts []string
	)
	cfg := sentinelConfig(set)
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		if ev.Kind == shard.ReplicaPromoted {
			mu.Lock()
			texts = append(texts, ev.String())
			mu.Unlock()
		}
	}}
	newClient(t, cfg)
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the replica promoted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(texts) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	for _, s := range texts {
		if !strings.Contains(s, "shard-0") || !strings.Contains(s, next.Addr) || !strings.Contains(s, old.Addr) {
			t.Errorf("promotion reported as %q: want the shard shard-0, the new master %s and the old %s", s, next.Addr, old.Addr)
		}
	}
}
