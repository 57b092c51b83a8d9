package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScanSeesEveryKeyOnce(t *testing.T) {
	ctx := context.Background()
	c, _ := startRing(t, 3)
	const n = 3000
	p := c.Pipeline()
	for i := 0; i < n; i++ {
		p.Send("SET", fmt.Sprintf("scan:%d", i), i)
	}
	p.Send("SADD", "other:set", "x")
	_, err := p.Exec(ctx)
	require.NoError(t, err)

	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Match: "scan:*", Count: 100})
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	require.NoError(t, s.Err())
	assert.Len(t, seen, n)
	for k, times := range seen {
		assert.Equal(t, 1, times, k)
	}

	var sets []string
	s = c.Scan(shard.ScanOptions{Type: "set"})
	for s.Next(ctx) {
		sets = append(sets, s.Key())
	}
	require.NoError(t, s.Err())
	assert.Equal(t, []string{"other:set"}, sets)
}
