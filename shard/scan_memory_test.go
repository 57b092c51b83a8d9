package shard_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// TestScanDuringAMigrationHoldsLittlePerKey: a Scan begun during a
// migration remembers every key it reports, to report each once however
// the keys move. Remembering the keys themselves cost each key's length
// and a string header besides (over 140 bytes per key of 106 bytes); it
// holds a fixed-size ID per key, whatever the key's length.
func TestScanDuringAMigrationHoldsLittlePerKey(t *testing.T) {
	ctx := context.Background()
	const n = 50_000
	_, from, to, _ := scanMigrationRing(ctx, t, strings.Repeat("k", 100), n)
	c := newClient(t, armedConfig(from, to))

	s := c.Scan(shard.ScanOptions{Count: 1000})
	count := 0
	for s.Next(ctx) {
		count++
	}
	require.NoError(t, s.Err())
	require.Equal(t, n, count, "keys reported")

	// The Scan's memory: the heap with it, then without it.
	runtime.GC()
	var m1, m2 runtime.MemStats
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(s)
	s = nil
	runtime.GC()
	runtime.ReadMemStats(&m2)
	perKey := (int64(m1.HeapAlloc) - int64(m2.HeapAlloc)) / n
	t.Logf("the Scan held %d bytes per key at its end", perKey)
	assert.Less(t, perKey, int64(64), "bytes per key remembered, for keys of 106 bytes")
}
