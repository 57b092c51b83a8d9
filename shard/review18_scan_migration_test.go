package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// scanMigrationRing starts four plain servers, writes n keys over the
// first three (a ring, from) and returns the servers, the ring of three
// (from), the ring of four (to) and the keys.
func scanMigrationRing(ctx context.Context, t *testing.T, prefix string, n int) (servers []*redistest.Server, from, to shard.Config, keys []string) {
	t.Helper()
	servers = redistest.StartNTB(t, 4, redistest.Options{})
	from, to = ringConfig(servers[:3]), ringConfig(servers)
	writer := newClient(t, from)
	keys = fillKeys(ctx, t, writer, prefix, n)
	require.NoError(t, writer.Close())
	return servers, from, to, keys
}

// scanAround scans c with pages of 10 keys and runs during once the
// first key has come; it returns how many times each key was reported.
func scanAround(ctx context.Context, t *testing.T, c *shard.Client, during func()) map[string]int {
	t.Helper()
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Count: 10})
	require.True(t, s.Next(ctx), "%v", s.Err())
	seen[s.Key()]++
	during()
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	require.NoError(t, s.Err())
	return seen
}

// requireEachKeyOnce checks that seen holds every one of keys, each
// reported exactly once.
func requireEachKeyOnce(t *testing.T, keys []string, seen map[string]int) {
	t.Helper()
	requireEveryKey(t, keys, seen)
	for k, times := range seen {
		assert.Equal(t, 1, times, "key %s", k)
	}
}

// moveAll runs the mover from one ring to the other, as an operator does
// (no other process checked: the test's client is the only one).
func moveAll(ctx context.Context, t *testing.T, from, to shard.Config) {
	t.Helper()
	_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, SkipProbe: true})
	require.NoError(t, err)
}

// keysOn returns how many of keys server s holds, asked of s directly.
func keysOn(t *testing.T, s *redistest.Server, keys []string) int {
	t.Helper()
	conn, err := redis.Dial("tcp", s.Addr)
	require.NoError(t, err)
	defer conn.Close()
	held := 0
	for _, k := range keys {
		n, err := redis.Int(conn.Do("EXISTS", k))
		require.NoError(t, err)
		held += n
	}
	return held
}

// onServer reports whether server s holds key, asked of s directly.
func onServer(t *testing.T, s *redistest.Server, key string) bool {
	t.Helper()
	return keysOn(t, s, []string{key}) == 1
}

// TestReview18ScanBegunBeforeAMigrationMeetsMovedKeys: a Scan of a ring
// of three begun before StartMigration to a ring of four planned the
// three nodes alone and forgot each node's keys as it went on. When the
// mover ran during the Scan (and the migration was finished, or not),
// the keys that left a node not walked yet for the fourth node were
// reported by no node. Every key present for the whole Scan must be
// reported; one reported before the migration was noticed may be
// reported again.
func TestReview18ScanBegunBeforeAMigrationMeetsMovedKeys(t *testing.T) {
	for _, finish := range []bool{false, true} {
		t.Run(fmt.Sprintf("finish=%v", finish), func(t *testing.T) {
			ctx := context.Background()
			servers, from, to, keys := scanMigrationRing(ctx, t, "r18b", 600)
			c := newClient(t, from)
			seen := map[string]int{}
			s := c.Scan(shard.ScanOptions{Count: 10})
			require.True(t, s.Next(ctx), "%v", s.Err())
			seen[s.Key()]++
			armed := to
			armed.Migration = &shard.Migration{Armed: true}
			require.NoError(t, c.StartMigration(ctx, armed))
			moveAll(ctx, t, from, to)
			require.NotZero(t, keysOn(t, servers[3], keys), "keys moved to the fourth node")
			if finish {
				require.NoError(t, c.FinishMigration())
			}
			for s.Next(ctx) {
				seen[s.Key()]++
			}
			require.NoError(t, s.Err())
			requireEveryKey(t, keys, seen)
			for k, times := range seen {
				assert.LessOrEqual(t, times, 2, "key %s", k)
			}
		})
	}
}

// TestReview18ScanDuringAMigrationWhileTheMoverRunsAndFinishes: a Scan
// begun on a client migrating from three nodes to four, with half the
// keys moved already (at their new owners) and half at their old ones,
// during which the mover moves the rest and the migration finishes,
// reports every key exactly once.
func TestReview18ScanDuringAMigrationWhileTheMoverRunsAndFinishes(t *testing.T) {
	ctx := context.Background()
	servers, from, to, keys := scanMigrationRing(ctx, t, "r18d", 600)
	c := newClient(t, armedConfig(from, to))
	for _, k := range keys[:300] { // moved on touch
		_, err := c.Do(ctx, "INCR", k)
		require.NoError(t, err)
	}
	require.NotZero(t, keysOn(t, servers[3], keys[:300]), "some keys are at the fourth node")
	seen := scanAround(ctx, t, c, func() {
		moveAll(ctx, t, from, to)
		require.NoError(t, c.FinishMigration())
	})
	requireEachKeyOnce(t, keys, seen)
}

// TestReview18ScanMeetsARollbackOnItsLastNode: a Scan begun on a client
// whose migration from three nodes to four is done (every key at its new
// owner) walks the three old nodes, then the four new ones. When the
// migration was turned around (AbortMigration) while the Scan walked the
// fourth node, and the mover moved the keys back to the three, the keys
// of the fourth node not reached yet went to nodes walked already: no
// node reported them. Every key must be reported, and exactly once (the
// Scan of a migrating client remembers its keys).
func TestReview18ScanMeetsARollbackOnItsLastNode(t *testing.T) {
	ctx := context.Background()
	servers, from, to, keys := scanMigrationRing(ctx, t, "r18r", 600)
	c := newClient(t, armedConfig(from, to))
	moveAll(ctx, t, from, to)
	onD := keysOn(t, servers[3], keys)
	require.Greater(t, onD, 20, "keys at the fourth node")
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Count: 5})
	reached := false
	for !reached && s.Next(ctx) {
		seen[s.Key()]++
		reached = onServer(t, servers[3], s.Key())
	}
	require.NoError(t, s.Err())
	require.True(t, reached, "the Scan reached the fourth node")
	require.NoError(t, c.AbortMigration(ctx))
	moveAll(ctx, t, to, from)
	require.Zero(t, keysOn(t, servers[3], keys), "every key moved back")
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	require.NoError(t, s.Err())
	requireEachKeyOnce(t, keys, seen)
}

// TestReview18ScanOfAShrinkOutlivesFinishMigration: a Scan begun on a
// client migrating from four nodes to three walks the fourth node (in the
// old topology alone) after the first three. FinishMigration during the
// Scan retires that node; the Scan must still end without an error and
// report every key exactly once.
func TestReview18ScanOfAShrinkOutlivesFinishMigration(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers), ringConfig(servers[:3])
	writer := newClient(t, from)
	keys := fillKeys(ctx, t, writer, "r18s", 600)
	require.NoError(t, writer.Close())
	require.NotZero(t, keysOn(t, servers[3], keys), "keys on the node that leaves")
	c := newClient(t, armedConfig(from, to))
	seen := scanAround(ctx, t, c, func() {
		moveAll(ctx, t, from, to)
		require.Zero(t, keysOn(t, servers[3], keys), "every key left the fourth node")
		require.NoError(t, c.FinishMigration())
	})
	requireEachKeyOnce(t, keys, seen)
}

// TestReview18ScanMeetsAnAbortBeforeTheFence: a Scan begun before
// StartMigration, which AbortMigration undoes before the fence is armed
// (nothing moved), reports every key, none more than twice: the keys
// reported before it noticed the migration were not remembered, and the
// nodes it walks after the change may hold them again.
func TestReview18ScanMeetsAnAbortBeforeTheFence(t *testing.T) {
	ctx := context.Background()
	_, from, to, keys := scanMigrationRing(ctx, t, "r18a", 600)
	c := newClient(t, from)
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Count: 10})
	require.True(t, s.Next(ctx), "%v", s.Err())
	seen[s.Key()]++
	require.NoError(t, c.StartMigration(ctx, to))
	require.True(t, s.Next(ctx), "%v", s.Err())
	seen[s.Key()]++
	require.NoError(t, c.AbortMigration(ctx))
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	require.NoError(t, s.Err())
	requireEveryKey(t, keys, seen)
	for k, times := range seen {
		assert.LessOrEqual(t, times, 2, "key %s", k)
	}
}

// TestReview18ScanWhileTheMoverRuns: the mover runs while a Scan begun
// before StartMigration walks (pages of 5 keys, the mover in batches of
// 20): whatever the interleaving, every key is reported, none more than
// twice.
func TestReview18ScanWhileTheMoverRuns(t *testing.T) {
	ctx := context.Background()
	servers, from, to, keys := scanMigrationRing(ctx, t, "r18m", 1500)
	c := newClient(t, from)
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Count: 5})
	require.True(t, s.Next(ctx), "%v", s.Err())
	seen[s.Key()]++
	armed := to
	armed.Migration = &shard.Migration{Armed: true}
	require.NoError(t, c.StartMigration(ctx, armed))
	moved := make(chan error, 1)
	go func() {
		_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, SkipProbe: true, Batch: 20, ScanCount: 20})
		moved <- err
	}()
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	require.NoError(t, <-moved)
	require.NoError(t, s.Err())
	require.NotZero(t, keysOn(t, servers[3], keys), "keys moved to the fourth node")
	requireEveryKey(t, keys, seen)
	for k, times := range seen {
		assert.LessOrEqual(t, times, 2, "key %s", k)
	}
}

// TestReview18ScanBegunBeforeAMigrationIntoACluster: a Scan of a ring of
// three begun before StartMigration into a Redis Cluster of three
// masters, during which the mover moves every key and the migration
// finishes (the client becoming a cluster client), reports every key,
// none more than twice.
func TestReview18ScanBegunBeforeAMigrationIntoACluster(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from, to := ringConfig(servers), clusterConfig(rc.Seeds()...)
	writer := newClient(t, from)
	keys := fillKeys(ctx, t, writer, "r18c", 600)
	require.NoError(t, writer.Close())
	c := newClient(t, from)
	seen := scanAround(ctx, t, c, func() {
		armed := to
		armed.Migration = &shard.Migration{Armed: true}
		require.NoError(t, c.StartMigration(ctx, armed))
		moveAll(ctx, t, from, to)
		for _, srv := range servers {
			require.Zero(t, keysOn(t, srv, keys), "every key left the ring")
		}
		require.NoError(t, c.FinishMigration())
	})
	requireEveryKey(t, keys, seen)
	for k, times := range seen {
		assert.LessOrEqual(t, times, 2, "key %s", k)
	}
}

// TestReview18ScanAfterFinishIntoAClusterSkipsTheOldRing: a Scan begun on
// a client migrating from a ring into a Redis Cluster walks the ring's
// nodes, then the masters. When FinishMigration made it a cluster client
// before the Scan reached the ring's last nodes, it took every key found
// there for a cluster master's: a stray copy the mover leaves on an old
// node (a key that node does not own) was reported as a key of the
// cluster, and a pool was opened again to the retired node. The ring's
// nodes left to walk hold no key of the cluster then: they are not
// walked.
func TestReview18ScanAfterFinishIntoAClusterSkipsTheOldRing(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from, to := ringConfig(servers), clusterConfig(rc.Seeds()...)
	writer := newClient(t, from)
	keys := fillKeys(ctx, t, writer, "r18f", 300)
	require.NoError(t, writer.Close())
	// A stray: a key written straight to the last ring node that the
	// ring places elsewhere.
	ring, err := shard.NewRingRouter(from.RingConfig())
	require.NoError(t, err)
	stray := ""
	for i := 0; stray == ""; i++ {
		k := fmt.Sprintf("r18stray:%d", i)
		if n, err := ring.Route(k); err == nil && n.Addr != servers[2].Addr {
			stray = k
		}
	}
	conn, err := redis.Dial("tcp", servers[2].Addr)
	require.NoError(t, err)
	_, err = conn.Do("SET", stray, "x")
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	c := newClient(t, armedConfig(from, to))
	seen := scanAround(ctx, t, c, func() {
		_, err = reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, SkipProbe: true, SkipVerify: true})
		require.NoError(t, err)
		require.NoError(t, c.FinishMigration())
	})
	requireEveryKey(t, keys, seen)
	assert.Zero(t, seen[stray], "the stray copy on an old ring node is no key of the cluster")
	for k, times := range seen {
		assert.Equal(t, 1, times, "key %s", k)
	}
}
