package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// When the Sentinels name a new master, the client marked the shard's
// node up at once, with a NodeUp event and Stats saying Down false,
// whatever the new master answered: ROLE, with which the query checks
// it, is answered also by a master loading its data, which refuses
// every command with LOADING (a health check's PING included). The node
// now stays down until the new master answers its health check.
func TestReview12SentinelNewMasterLoadingIsNotUp(t *testing.T) {
	o := sentinelSetOptions(1)
	set := redistest.StartSentinelsTB(t, o)
	name := set.Names()[0]
	var (
		mu     sync.Mutex
		events []shard.NodeEvent
	)
	cfg := sentinelConfig(set)
	cfg.Sentinel.RefreshInterval = -1
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}}
	c := newClient(t, cfg)
	ctx := context.Background()
	ups := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, ev := range events {
			if ev.Kind == shard.NodeUp {
				n++
			}
		}
		return n
	}
	down := func() bool {
		for _, n := range c.Stats().Nodes {
			if n.Node.Name == "shard-0" {
				return n.Down
			}
		}
		t.Fatal("no node shard-0 in Stats")
		return false
	}

	// The next master: 3000 keys of 1 kB, reloaded at 2 ms a key (6 s),
	// serving events between keys.
	next := redistest.StartTB(t, o.Data)
	if _, err := next.Do("DEBUG", "POPULATE", "3000", "k", "1000"); err != nil {
		t.Fatal(err)
	}

	// The shard's servers die: no failover, the node is marked down.
	old, replica := shardServers(t, set, 0)
	for _, s := range []*redistest.Server{old, replica} {
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 30*time.Second, "the node to be marked down", down)
	before := ups()

	for _, cmd := range [][]string{
		{"CONFIG", "SET", "key-load-delay", "2000"},
		{"CONFIG", "SET", "loading-process-events-interval-bytes", "1024"},
	} {
		if _, err := next.Do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	reloaded := make(chan error, 1)
	go func() {
		_, err := next.DoContext(context.Background(), "DEBUG", "RELOAD")
		reloaded <- err
	}()
	t.Cleanup(func() { <-reloaded })
	loading := func() bool {
		_, err := next.Do("GET", "k:0")
		return err != nil && strings.Contains(err.Error(), "LOADING")
	}
	waitFor(t, 10*time.Second, "the next master to be loading", loading)

	// The Sentinels now name it.
	for _, s := range set.Sentinels {
		for _, cmd := range [][]string{
			{"SENTINEL", "REMOVE", name},
			{"SENTINEL", "MONITOR", name, "127.0.0.1", fmt.Sprint(next.Port), "2"},
		} {
			if _, err := s.Do(cmd...); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := c.Refresh(ctx); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if got := c.Stats().Sentinel[0].Master; got != next.Addr {
		t.Fatalf("after Refresh the master is %s, want %s", got, next.Addr)
	}
	_, doErr := c.Do(ctx, "GET", "k:0")
	wasUp, isDown, still := ups() > before, down(), loading()
	if !still {
		t.Skip("the next master finished loading before the checks: nothing to tell")
	}
	if wasUp || !isDown {
		t.Errorf("the new master answers LOADING (GET: %v), yet the node was reported up (NodeUp: %t, Stats Down: %t)", doErr, wasUp, isDown)
	}

	// Once loaded, it answers, and the node comes up.
	if err := <-reloaded; err != nil {
		t.Fatalf("DEBUG RELOAD: %v", err)
	}
	reloaded <- nil
	waitFor(t, 30*time.Second, "the node to come up once the master has loaded", func() bool { return !down() && ups() > before })
	if _, err := c.Do(ctx, "GET", "k:0"); err != nil {
		t.Errorf("GET once the new master has loaded: %v", err)
	}
}
