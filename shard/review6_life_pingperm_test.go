package shard_test

import (
	"context"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// pingsSeen returns how many PINGs s has answered or refused (ACL).
func pingsSeen(t *testing.T, s *redistest.Server) int {
	t.Helper()
	info, err := s.Do("INFO", "commandstats")
	require.NoError(t, err)
	m := regexp.MustCompile(`cmdstat_ping:calls=(\d+),.*rejected_calls=(\d+)`).FindStringSubmatch(info)
	if len(m) != 3 {
		return 0
	}
	calls, _ := strconv.Atoi(m[1])
	rejected, _ := strconv.Atoi(m[2])
	return calls + rejected
}

// TestReview6HealthChecksOfAUserWithoutPing: the client logs in as an ACL
// user allowed its data commands but not PING. The node serves every
// command; its health checks get NOPERM, a reply from a live server. They
// counted as failures: after FailureLimit idle health ticks the node was
// marked down, and as every PING kept getting NOPERM it stayed down for
// good, failing every command fast with ErrNodeDown.
func TestReview6HealthChecksOfAUserWithoutPing(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{Users: []redistest.User{
		{Name: "admin", Password: "admin-pw"}, // the harness's own login
		{Name: "app", Password: "app-pw", Rules: "~* +get +set"},
	}})
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = "app", "app-pw"
	var mu sync.Mutex
	var downs []string
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		if ev.Kind == shard.NodeDown {
			mu.Lock()
			downs = append(downs, ev.String())
			mu.Unlock()
		}
	}}
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "perm:k", "v")
	require.NoError(t, err)

	// Idle: only health checks reach the node. Wait for twice
	// FailureLimit of them.
	before := pingsSeen(t, servers[0])
	waitFor(t, 20*time.Second, "six health checks", func() bool {
		return pingsSeen(t, servers[0]) >= before+2*cfg.Health.FailureLimit
	})
	mu.Lock()
	require.Empty(t, downs, "a node that answers was marked down")
	mu.Unlock()
	nodes := c.Stats().Nodes
	require.Len(t, nodes, 1)
	require.False(t, nodes[0].Down)
	v, err := c.Do(ctx, "GET", "perm:k")
	require.NoError(t, err)
	require.Equal(t, []byte("v"), v)
}
