package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview12MigrationReadRefusedByProtocolErrorIsNoNodeFailure: while
// keys move, a read of a moving key goes to its old owner first, as
// MULTI, EXISTS, the read and EXEC on the owner's automatic pipeline. A
// read whose argument is over the server's proto-max-bulk-len is refused
// with a protocol error, after which the server closes the connection.
// That refusal is the command's fault, not the node's: the caller must
// get the server's reply, and the old owner must not be charged a failure.
// The refusal, read among the transaction's replies that are dropped,
// was dropped too: the connection's close that follows counted as a
// failure of the node towards marking it down (its idle connections
// dropped), which a command refused outside a transaction never is.
// With FailureLimit 1 such reads marked the healthy old owner down.
func TestReview12MigrationReadRefusedByProtocolErrorIsNoNodeFailure(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	// Health checks on but rare: only the reads' verdicts count, and a
	// single failure of the node marks it down.
	from.Health = shard.HealthOptions{Interval: time.Hour, FailureLimit: 1, Timeout: time.Second}
	to.Health = from.Health
	byAddr := serversByAddr(servers)

	// Keys that move away from one old owner.
	var moving []string
	var oldAddr string
	for i := 0; len(moving) < 16 && i < 200000; i++ {
		k := fmt.Sprintf("r12pe:%d", i)
		o, n := ringOwner(t, from, k), ringOwner(t, to, k)
		if o != n && (oldAddr == "" || o == oldAddr) {
			oldAddr = o
			moving = append(moving, k)
		}
	}
	require.Len(t, moving, 16)
	for _, k := range moving {
		_, err := byAddr[oldAddr].Do("SADD", k, "m")
		require.NoError(t, err)
	}
	cfg := armedConfig(from, to)
	var downs atomic.Int32
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		if ev.Kind == shard.NodeDown {
			downs.Add(1)
		}
	}}
	c := newClient(t, cfg)
	shard.AlwaysPipeline(c)
	oldStats := func() shard.NodeStats {
		ns := nodeStats(c, oldAddr)
		require.Len(t, ns, 1)
		return ns[0]
	}
	require.False(t, oldStats().Down)

	big := strings.Repeat("x", 1<<20+1)
	for _, k := range moving {
		_, err := c.Do(ctx, "SISMEMBER", k, big)
		var re redis.Error
		require.True(t, errors.As(err, &re) && strings.Contains(string(re), "Protocol error"), "SISMEMBER %s with a member over proto-max-bulk-len: %v", k, err)
	}
	require.False(t, oldStats().Down, "a healthy old owner was marked down by reads the server refused")
	require.Zero(t, downs.Load(), "a node was marked down by reads the server refused")
	for _, k := range moving {
		n, err := redis.Int(c.Do(ctx, "SISMEMBER", k, "m"))
		require.NoError(t, err, k)
		require.Equal(t, 1, n, k)
	}
}
