package shard_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestEjectRacingASuccessIsUndone: a reply that arrives while the node is
// being marked down (here during a slow NodeState hook, before the
// ejection) marks it up again; the ejection must not then happen after
// the restore, which would leave an answering shard out of the ring for
// good.
func TestEjectRacingASuccessIsUndone(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.DisableAutoPipeline = true
	cfg.Pool.ReadTimeout = 5 * time.Second
	cfg.Health = shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 1, Timeout: 200 * time.Millisecond, AutoEject: true}
	downSeen := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var events []string
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		events = append(events, ev.Kind.String())
		mu.Unlock()
		if ev.Kind == shard.NodeDown {
			once.Do(func() { close(downSeen) })
			time.Sleep(300 * time.Millisecond) // a hook that logs somewhere slow
		}
	}}
	c := newClient(t, cfg)
	keys := keysByShard(t, c, 1)
	slow := servers[0]
	key := keys[slow.Addr][0]
	require.NoError(t, slow.Pause())
	got := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), "GET", key) // sent, waits for the paused server
		got <- err
	}()
	<-downSeen
	require.NoError(t, slow.Resume())
	require.NoError(t, <-got, "the in-flight GET is answered once the server resumes")
	waitFor(t, 5*time.Second, "the ejection", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(events, shard.NodeEjected.String())
	})
	waitFor(t, 5*time.Second, "the answering shard to be back in the ring", func() bool {
		n, err := c.Router().Route(key)
		return err == nil && n.Addr == slow.Addr
	})
	mu.Lock()
	t.Logf("node events: %v", events)
	mu.Unlock()
}

// TestSlowCommandsDoNotMarkANodeDown: writes held up by CLIENT PAUSE
// WRITE time out, all at once; the server answers PING throughout. The
// timeouts of one slow spell are no verdict on the node: it is not marked
// down, nor ejected.
func TestSlowCommandsDoNotMarkANodeDown(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ReadTimeout = 300 * time.Millisecond
	cfg.DisableAutoPipeline = true
	cfg.Health = shard.HealthOptions{Interval: time.Second, FailureLimit: 3, Timeout: 500 * time.Millisecond, AutoEject: true}
	var mu sync.Mutex
	var events []string
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		events = append(events, ev.String())
		mu.Unlock()
	}}
	c := newClient(t, cfg)
	keys := keysByShard(t, c, 3)
	slow := servers[0]
	_, err := slow.Do("CLIENT", "PAUSE", "2000", "WRITE")
	require.NoError(t, err)
	var wg sync.WaitGroup
	for _, k := range keys[slow.Addr] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Do(context.Background(), "SET", k, "v")
			t.Logf("SET %s: %v", k, err)
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, events, "a shard whose writes are slow but that answers PING is not down")
}
