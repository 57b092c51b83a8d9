package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestSentinelMixedRingPlainWriteWithUnknownOutcome: in a ring that mixes
// plain and Sentinel shards, a write on a plain shard whose connection
// failed after it was sent (no reply within the read timeout) is an
// *UnknownOutcomeError, as in a ring of plain shards only: a caller must
// be able to tell it from a write that never left before it retries.
func TestSentinelMixedRingPlainWriteWithUnknownOutcome(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	plain := redistest.StartNTB(t, 1, redistest.Options{Users: []redistest.User{{Name: sentDataUser, Password: sentDataPW}}})[0]
	cfg := sentinelConfig(set)
	cfg.Shards = append(cfg.Shards, ring.Shard{Name: "plain", Addr: plain.Addr, Weight: 1})
	cfg.Pool.ReadTimeout = 300 * time.Millisecond
	// No health check may mark the paused server down before the write
	// is sent (it would then not run: no unknown outcome).
	cfg.Health = shard.HealthOptions{Interval: -1}
	c := newClient(t, cfg)
	ctx := context.Background()

	var key string
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("mixed:%d", i)
		n, err := c.Router().Route(k)
		require.NoError(t, err)
		if n.Addr == plain.Addr {
			key = k
		}
	}
	_, err := c.Do(ctx, "GET", key) // a pooled connection is open
	require.NoError(t, err)
	require.NoError(t, plain.Pause())
	defer plain.Resume()

	_, err = c.Do(ctx, "SET", key, "v")
	require.Error(t, err)
	var ne *shard.NodeError
	require.True(t, errors.As(err, &ne), "a *NodeError: %v", err)
	var uo *shard.UnknownOutcomeError
	require.True(t, errors.As(err, &uo), "a write cut off after sending is an *UnknownOutcomeError: %v", err)
	require.Equal(t, "SET", uo.Command)
	require.Equal(t, plain.Addr, uo.Node.Addr)
}
