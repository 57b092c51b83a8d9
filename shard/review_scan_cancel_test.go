package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReviewScanCancelled: a context cancelled between two SCAN calls ends
// the Scan with an error wrapping context.Canceled.
func TestReviewScanCancelled(t *testing.T) {
	ctx := context.Background()
	c, _ := startRing(t, 3)
	for i := 0; i < 500; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("cx:%d", i), i)
		require.NoError(t, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	s := c.Scan(shard.ScanOptions{Count: 10})
	require.True(t, s.Next(cctx))
	cancel()
	n := 0
	for s.Next(cctx) {
		n++
	}
	require.ErrorIs(t, s.Err(), context.Canceled, "after %d keys", n)
	require.Less(t, n, 499)
}
