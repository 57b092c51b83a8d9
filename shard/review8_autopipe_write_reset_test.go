package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview8AutoPipelineWriteResetIsNoNodeFailure: through the automatic
// pipeline (the path of concurrent single commands), a SET whose value
// the server refuses part way (it closes the connection while the value
// is being written) came back of unknown outcome although the server
// never read it whole, and counted as a failure of the node: a few of
// them marked a healthy node down, and every key of its shard failed.
func TestReview8AutoPipelineWriteResetIsNoNodeFailure(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Health.Interval = time.Hour // only the commands count the node's failures
	c := newClient(t, cfg)
	shard.AlwaysPipeline(c)
	ctx := context.Background()
	big := strings.Repeat("x", 32<<20)

	for i := 0; i < 5; i++ {
		_, err := c.Do(ctx, "SET", "review8:apwr:big", big)
		requireRefusedOrNotWritten(t, err, "oversized SET")
	}
	stats := c.Stats()
	require.Len(t, stats.Nodes, 1)
	require.False(t, stats.Nodes[0].Down, "a node that answers was marked down by write resets")

	n, err := redis.Int(c.Do(ctx, "INCR", "review8:apwr:n"))
	require.NoError(t, err, "a command after the oversized SETs")
	require.Equal(t, 1, n)
	exists, err := redis.Int(c.Do(ctx, "EXISTS", "review8:apwr:big"))
	require.NoError(t, err)
	require.Zero(t, exists)
}
