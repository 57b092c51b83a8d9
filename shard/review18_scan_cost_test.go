package shard_test

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// scanCalls returns how many SCAN commands the servers served in all,
// as each tells in INFO commandstats.
func scanCalls(t *testing.T, servers []*redistest.Server) int {
	t.Helper()
	total := 0
	for _, s := range servers {
		conn, err := redis.Dial("tcp", s.Addr)
		require.NoError(t, err)
		info, err := redis.String(conn.Do("INFO", "commandstats"))
		require.NoError(t, conn.Close())
		require.NoError(t, err)
		for _, line := range strings.Split(info, "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_scan:calls="); ok {
				n := 0
				for _, r := range rest {
					if r < '0' || r > '9' {
						break
					}
					n = n*10 + int(r-'0')
				}
				total += n
			}
		}
	}
	return total
}

// TestReview18ScanCostOfAMigrationMetMidway: a Scan of a ring of three
// holding 200k keys, begun before StartMigration to a ring of four and
// meeting it on its first page, walked the three old nodes to the end,
// then the whole plan of a Scan begun then (the three old nodes again,
// then the four new ones): three passes over the database. The walks it
// had made or begun count as those of the old nodes (no key moved before
// the change): it walks the new nodes once more, two passes in all.
func TestReview18ScanCostOfAMigrationMetMidway(t *testing.T) {
	ctx := context.Background()
	const n = 200_000
	servers, from, to, keys := scanMigrationRing(ctx, t, "r18cost", n)
	c := newClient(t, from)

	before := scanCalls(t, servers)
	plain := c.Scan(shard.ScanOptions{Count: 1000})
	count := 0
	for plain.Next(ctx) {
		count++
	}
	require.NoError(t, plain.Err())
	require.Equal(t, n, count)
	pass := scanCalls(t, servers) - before

	before = scanCalls(t, servers)
	seen := make(map[string]int, n)
	s := c.Scan(shard.ScanOptions{Count: 1000})
	require.True(t, s.Next(ctx), "%v", s.Err())
	seen[s.Key()]++
	armed := to
	armed.Migration = &shard.Migration{Armed: true}
	require.NoError(t, c.StartMigration(ctx, armed))
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	require.NoError(t, s.Err())
	calls := scanCalls(t, servers) - before
	// The Scan's memory: the heap with it, then without it.
	runtime.GC()
	var m1, m2 runtime.MemStats
	runtime.ReadMemStats(&m1)
	runtime.KeepAlive(s)
	s = nil
	runtime.GC()
	runtime.ReadMemStats(&m2)
	requireEveryKey(t, keys, seen)
	for k, times := range seen {
		assert.LessOrEqual(t, times, 2, "key %s", k)
	}
	t.Logf("SCAN calls: one pass %d, across the migration %d; the Scan held %d bytes at its end (%d keys reported)",
		pass, calls, int64(m1.HeapAlloc)-int64(m2.HeapAlloc), len(seen))
	// Two passes (old nodes, then new ones; the fourth node is empty),
	// with room for SCAN's pages not being exactly COUNT keys.
	assert.LessOrEqual(t, calls, 2*pass+pass/2, "SCAN calls across the migration, against one pass of %d", pass)
}
