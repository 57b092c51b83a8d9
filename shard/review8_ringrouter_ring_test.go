package shard_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview8RingRouterRingIsBuiltOnce: Ring used to build the whole ring
// again (160 points per shard, each hashed) on every call, which a caller
// asking it per request paid for every time.
func TestReview8RingRouterRingIsBuiltOnce(t *testing.T) {
	rr, err := shard.NewRingRouter(ring.Config{Shards: []ring.Shard{
		{Name: "a", Addr: "127.0.0.1:7001", Weight: 1},
		{Name: "b", Addr: "127.0.0.1:7002", Weight: 1},
		{Name: "c", Addr: "127.0.0.1:7003", Weight: 1},
	}})
	require.NoError(t, err)
	first := rr.Ring()
	require.NotNil(t, first)
	require.Equal(t, 3, first.Len())
	require.Same(t, first, rr.Ring())
	allocs := testing.AllocsPerRun(100, func() { _ = rr.Ring() })
	require.Zero(t, allocs, "Ring allocates %v times per call", allocs)

	// Ejecting a shard changes routing, not the full ring.
	require.NoError(t, rr.Eject(1))
	require.Same(t, first, rr.Ring())
	require.Equal(t, 3, rr.Ring().Len())
}
