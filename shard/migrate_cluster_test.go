package shard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// intoCluster is the config of the shared cluster as a migration target,
// with the ring client's pool options.
func intoCluster(t *testing.T, ring shard.Config) shard.Config {
	cfg := clusterConfig(clusterForTest(t).Seeds()...)
	cfg.Pool = ring.Pool
	return cfg
}

// ringKeys counts the keys with prefix on the ring's servers, and those
// the cluster has (read by a plain cluster client of its own).
func keysWhere(t *testing.T, servers []*redistest.Server, plain *shard.Client, prefix string, n int) (onRing, inCluster int) {
	t.Helper()
	for _, s := range servers {
		keys, err := s.Do("KEYS", prefix+":*")
		require.NoError(t, err)
		if keys != "" {
			onRing += len(splitLines(keys))
		}
	}
	keys := make([]any, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s:%d", prefix, i)
	}
	got, err := redis.Int(plain.Do(context.Background(), "EXISTS", keys...))
	require.NoError(t, err)
	return onRing, got
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '\n' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// ringWithKeys starts a ring of three servers with a client on it that
// has set prefix:0 .. prefix:<n-1> to 0 .. n-1, and returns them with the
// config of the shared test cluster to migrate into and a plain client
// on that cluster.
func ringWithKeys(t *testing.T, prefix string, n int) (*shard.Client, []*redistest.Server, shard.Config, *shard.Client) {
	t.Helper()
	c, servers := startRing(t, 3)
	to := intoCluster(t, ringConfig(servers))
	plain := newClient(t, to)
	for i := 0; i < n; i++ {
		_, err := c.Do(context.Background(), "SET", fmt.Sprintf("%s:%d", prefix, i), i)
		require.NoError(t, err)
	}
	return c, servers, to, plain
}

// TestRingClientIntoClusterAbortBeforeArming starts a migration of a
// live ring client into a cluster and turns back before the fence: the
// client routes by the ring throughout, nothing reaches the cluster, and
// it is a plain ring client again.
func TestRingClientIntoClusterAbortBeforeArming(t *testing.T) {
	ctx := context.Background()
	const n = 60
	c, servers, to, plain := ringWithKeys(t, "ab", n)
	require.NoError(t, c.StartMigration(ctx, to))
	info, ok := c.Migration()
	require.True(t, ok)
	assert.Equal(t, shard.PhaseWaiting, info.Phase)
	_, isCluster := info.To.(*shard.ClusterRouter)
	assert.True(t, isCluster, "the migration's target is the cluster: %T", info.To)
	_, isRing := c.Router().(*shard.RingRouter)
	assert.True(t, isRing, "waiting, the client routes by the ring: %T", c.Router())
	for i := 0; i < n; i++ {
		v, err := redis.Int(c.Do(ctx, "INCR", fmt.Sprintf("ab:%d", i)))
		require.NoError(t, err)
		require.Equal(t, i+1, v)
	}
	require.NoError(t, c.AbortMigration(ctx))
	_, ok = c.Migration()
	assert.False(t, ok)
	_, isRing = c.Router().(*shard.RingRouter)
	assert.True(t, isRing, "back on the ring: %T", c.Router())
	onRing, inCluster := keysWhere(t, servers, plain, "ab", n)
	assert.Equal(t, n, onRing)
	assert.Zero(t, inCluster, "nothing reached the cluster")
	for i := 0; i < n; i++ {
		v, err := redis.Int(c.Do(ctx, "GET", fmt.Sprintf("ab:%d", i)))
		require.NoError(t, err)
		assert.Equal(t, i+1, v)
	}
	// The client can start again (here into the cluster, armed at once).
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	v, err := redis.Int(c.Do(ctx, "INCR", "ab:0"))
	require.NoError(t, err)
	assert.Equal(t, 2, v)
	require.NoError(t, c.FinishMigration())
	_, err = c.Do(ctx, "DEL", "ab:0")
	require.NoError(t, err)
}

// TestRingClientIntoClusterAbortAfterArming turns a migration into a
// cluster around once keys have moved: the client keeps routing by the
// cluster (moving forward) until the reverse fence, then routes by the
// ring and moves every key back; FinishMigration leaves a ring client.
func TestRingClientIntoClusterAbortAfterArming(t *testing.T) {
	ctx := context.Background()
	const n = 60
	c, servers, to, plain := ringWithKeys(t, "back", n)
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	_, isCluster := c.Router().(*shard.ClusterRouter)
	require.True(t, isCluster, "armed, the client routes by the cluster: %T", c.Router())
	for i := 0; i < n; i += 2 { // half the keys move into the cluster
		_, err := c.Do(ctx, "INCR", fmt.Sprintf("back:%d", i))
		require.NoError(t, err)
	}
	onRing, inCluster := keysWhere(t, servers, plain, "back", n)
	require.Equal(t, n/2, inCluster)
	require.Equal(t, n/2, onRing)
	// Scan walks the ring's shards and the cluster's masters: every key
	// once, wherever it is.
	seen := map[string]int{}
	sc := c.Scan(shard.ScanOptions{Match: "back:*", Count: 20})
	for sc.Next(ctx) {
		seen[sc.Key()]++
	}
	require.NoError(t, sc.Err())
	require.Len(t, seen, n)
	for k, times := range seen {
		require.Equal(t, 1, times, k)
	}

	require.NoError(t, c.AbortMigration(ctx))
	info, ok := c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase, "the rollback waits for its own fence")
	_, isCluster = c.Router().(*shard.ClusterRouter)
	require.True(t, isCluster, "until then it routes by the cluster: %T", c.Router())
	_, err := c.Do(ctx, "INCR", "back:1") // moves forward meanwhile
	require.NoError(t, err)
	require.NoError(t, c.ArmMigration()) // the reverse fence
	_, isRing := c.Router().(*shard.RingRouter)
	require.True(t, isRing, "the reverse armed, the client routes by the ring: %T", c.Router())
	all := make([]any, n)
	for i := range all {
		all[i] = fmt.Sprintf("back:%d", i)
	}
	// Every key comes back on touch: one MGET moves the keys of many
	// slots from each cluster master (one MIGRATE per slot there).
	vals, err := redis.Ints(c.Do(ctx, "MGET", all...))
	require.NoError(t, err)
	require.Len(t, vals, n)
	for i, v := range vals {
		want := i
		if i%2 == 0 || i == 1 {
			want++
		}
		assert.Equal(t, want, v, "back:%d", i)
	}
	require.NoError(t, c.FinishMigration())
	onRing, inCluster = keysWhere(t, servers, plain, "back", n)
	assert.Equal(t, n, onRing)
	assert.Zero(t, inCluster)
	// A ring client again: a cross-node MGET is split by shard, and
	// ForEachNode visits the ring's shards alone.
	vals, err = redis.Ints(c.Do(ctx, "MGET", all...))
	require.NoError(t, err)
	require.Len(t, vals, n)
	assert.Equal(t, 1, vals[0])
	var visited []string
	var mu sync.Mutex
	require.NoError(t, c.ForEachNode(ctx, func(_ context.Context, node shard.Node, _ redis.Conn) error {
		mu.Lock()
		visited = append(visited, node.Addr)
		mu.Unlock()
		return nil
	}))
	var ringAddrs []string
	for _, s := range servers {
		ringAddrs = append(ringAddrs, s.Addr)
	}
	assert.ElementsMatch(t, ringAddrs, visited)
}

// TestRingClientIntoClusterReadsReplicasAfterFinish checks that the
// target config's ReadFrom applies once the migration ends, and not
// before (replicas cannot see keys being moved).
func TestRingClientIntoClusterReadsReplicasAfterFinish(t *testing.T) {
	ctx := context.Background()
	c, servers := startRing(t, 2)
	to := intoCluster(t, ringConfig(servers))
	to.Cluster.ReadFrom = shard.ReadReplicaRandom
	_, err := c.Do(ctx, "SET", "rr:a", "v")
	require.NoError(t, err)
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	replicas := map[string]bool{}
	for _, r := range clusterForTest(t).Replicas() {
		replicas[r.Addr] = true
	}
	replicaReads := func() int64 {
		var n int64
		for _, ns := range c.Stats().Nodes {
			if replicas[ns.Node.Addr] {
				n += ns.Commands
			}
		}
		return n
	}
	_, err = c.Do(ctx, "GETEX", "rr:a") // a write that changes nothing: moves the key
	require.NoError(t, err)
	for range 20 {
		v, err := redis.String(c.Do(ctx, "GET", "rr:a"))
		require.NoError(t, err)
		require.Equal(t, "v", v)
	}
	assert.Zero(t, replicaReads(), "no replica reads during the migration")
	require.NoError(t, c.FinishMigration())
	waitFor(t, 10*time.Second, "a read served by a replica", func() bool {
		v, err := redis.String(c.Do(ctx, "GET", "rr:a"))
		return err == nil && v == "v" && replicaReads() > 0
	})
	_, err = c.Do(ctx, "DEL", "rr:a")
	require.NoError(t, err)
}

// TestStartMigrationIntoClusterRefusals: what cannot move into a cluster
// at run time says why, with ErrMigration, and changes nothing.
func TestStartMigrationIntoClusterRefusals(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	seeds := clusterForTest(t).Seeds()
	dead := redistest.StartTB(t, redistest.Options{})
	deadAddr := dead.Addr
	require.NoError(t, dead.Stop())
	for _, tc := range []struct {
		name   string
		client func() shard.Config
		to     shard.Config
		want   string
	}{
		{"database other than 0", func() shard.Config {
			cfg := ringConfig(servers)
			cfg.Pool.DB = 2
			return cfg
		}, clusterConfig(seeds...), "database 0"},
		{"cluster unreachable", func() shard.Config { return ringConfig(servers) }, clusterConfig(deadAddr), "discovering the cluster"},
		{"a cluster client", func() shard.Config { return clusterConfig(seeds...) }, clusterConfig(seeds...), "cluster client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.client())
			before := c.Router()
			err := c.StartMigration(ctx, tc.to)
			require.ErrorIs(t, err, shard.ErrMigration)
			assert.Contains(t, err.Error(), tc.want)
			assert.Regexp(t, "^shardis: ", err.Error())
			_, ok := c.Migration()
			assert.False(t, ok)
			assert.Equal(t, before, c.Router())
		})
	}
}

// TestCloseDuringMigrationIntoCluster closes a loaded ring client while
// it discovers a cluster, arms and starts moving keys: every call returns
// (nil, or an error once Close began), and no goroutine is left behind.
func TestCloseDuringMigrationIntoCluster(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	to := intoCluster(t, ringConfig(servers))
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for round := 0; round < 6; round++ {
		c, err := shard.New(ctx, ringConfig(servers))
		require.NoError(t, err)
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			failures []error
			closing  = make(chan struct{})
		)
		note := func(err error) {
			if err == nil {
				return
			}
			select {
			case <-closing:
				return // anything may fail once Close began
			default:
			}
			mu.Lock()
			failures = append(failures, err)
			mu.Unlock()
		}
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; ; i++ {
					_, err := c.Do(ctx, "INCR", fmt.Sprintf("close:%d:%d", round, (w*7+i)%40))
					if errors.Is(err, shard.ErrClosed) {
						return
					}
					note(err)
				}
			}(w)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.StartMigration(ctx, to)
			if err == nil {
				err = c.ArmMigration()
			}
			if err != nil && !errors.Is(err, shard.ErrClosed) && !errors.Is(err, shard.ErrMigration) {
				note(err)
			}
		}()
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		close(closing)
		done := make(chan struct{})
		go func() {
			c.Close()
			wg.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: Close or a call hung", round)
		}
		require.Empty(t, failures, "round %d: failures before Close", round)
	}
}

// TestRingClientIntoClusterRefreshesItsTable checks that the periodic
// refresh of the slot table starts when a ring client's routing switches
// to a cluster (not before: it is still a ring client while waiting), and
// stops with Close.
func TestRingClientIntoClusterRefreshesItsTable(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	to := intoCluster(t, ringConfig(servers))
	to.Cluster.RefreshInterval = 50 * time.Millisecond
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c, err := shard.New(ctx, ringConfig(servers))
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.StartMigration(ctx, to))
	time.Sleep(300 * time.Millisecond) // six refresh intervals: nothing may happen in them
	assert.Zero(t, c.Stats().Refreshes, "waiting, the client is a ring client: no refresh")
	require.NoError(t, c.ArmMigration())
	waitFor(t, 10*time.Second, "periodic refreshes", func() bool { return c.Stats().Refreshes >= 4 })
	require.NoError(t, c.FinishMigration())
	n := c.Stats().Refreshes
	waitFor(t, 10*time.Second, "refreshes after FinishMigration", func() bool { return c.Stats().Refreshes > n+2 })
	// A command over keys of two slots is refused now, as by any cluster
	// client.
	_, err = c.Do(ctx, "SUNIONSTORE", "refresh:{a}", "refresh:{b}")
	var cse *shard.CrossShardError
	require.ErrorAs(t, err, &cse)
	require.NoError(t, c.Close())
}

// TestUsersRouterClientIntoCluster moves a client built on the user's own
// Router into a cluster at run time: once armed, keys leave the router's
// nodes for their slots' masters on first use (an MGET of keys of several
// slots included), and FinishMigration leaves a cluster client.
func TestUsersRouterClientIntoCluster(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	base := ringConfig(servers)
	recent := shard.Node{Name: "recent", Addr: servers[0].Addr}
	archive := shard.Node{Name: "archive", Addr: servers[1].Addr}
	c := newClient(t, shard.Config{Router: yearRouter{recent: recent, archive: archive}, Pool: base.Pool, Health: base.Health})
	to := intoCluster(t, base)
	plain := newClient(t, to)
	keys := []any{"y2020:u1", "y2020:u2", "y2024:u1", "y2024:u2"}
	for _, k := range keys {
		_, err := c.Do(ctx, "SET", k, k)
		require.NoError(t, err)
	}
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	vals, err := redis.Strings(c.Do(ctx, "MGET", keys...))
	require.NoError(t, err)
	require.Len(t, vals, len(keys))
	for i, k := range keys {
		assert.Equal(t, k, vals[i])
	}
	for _, k := range keys { // read where they are; writes move them
		_, err := c.Do(ctx, "GETEX", k)
		require.NoError(t, err)
	}
	require.NoError(t, c.FinishMigration())
	_, isCluster := c.Router().(*shard.ClusterRouter)
	assert.True(t, isCluster, "a cluster client now: %T", c.Router())
	for _, s := range servers {
		size, err := s.Do("DBSIZE")
		require.NoError(t, err)
		assert.Equal(t, "0", size, "every key left %s", s.Addr)
	}
	n, err := redis.Int(plain.Do(ctx, "EXISTS", keys...))
	require.NoError(t, err)
	assert.Equal(t, len(keys), n, "every key is in the cluster")
	_, err = c.Do(ctx, "DEL", keys...)
	require.NoError(t, err)
}

// TestRingClientIntoClusterReadsTheTableAgainAtTheFence moves a slot
// inside the cluster while the migration waits for its fence: the first
// command after arming moves its key to the slot's new master (a MIGRATE
// to the master the client knew from StartMigration would fail, the
// target answering MOVED).
func TestRingClientIntoClusterReadsTheTableAgainAtTheFence(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	to := clusterConfig(rc.Seeds()...)
	to.Cluster.RefreshInterval = -1 // no periodic refresh: only the fence's
	c := newClient(t, ringConfig(servers))
	const key = "aged:counter"
	_, err := c.Do(ctx, "SET", key, 41)
	require.NoError(t, err)
	require.NoError(t, c.StartMigration(ctx, to))

	slot := cluster.Slot(key)
	src, err := rc.MasterOfSlot(slot)
	require.NoError(t, err)
	dst, err := rc.OtherMaster(src)
	require.NoError(t, err)
	moveSlot(t, slot, src, dst, rc.Masters())

	require.NoError(t, c.ArmMigration())
	v, err := redis.Int(c.Do(ctx, "INCR", key))
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	owner, err := c.Router().Route(key)
	require.NoError(t, err)
	assert.Equal(t, dst.Addr, owner.Addr)
	got, err := dst.Do("GET", key)
	require.NoError(t, err)
	assert.Equal(t, "42", got, "the key is at the slot's new master")
}

// TestStartMigrationIntoClusterAddrsAndArmed: to.Migration gives a run-time
// migration its Addrs (where the old nodes reach the new ones: MIGRATE
// connects from server to server) and Armed (no fence to wait for).
func TestStartMigrationIntoClusterAddrsAndArmed(t *testing.T) {
	ctx := context.Background()
	c, servers := startRing(t, 2)
	to := intoCluster(t, ringConfig(servers))
	dead := redistest.StartTB(t, redistest.Options{})
	deadAddr := dead.Addr
	require.NoError(t, dead.Stop())
	// Two keys whose slots have different masters.
	keys := []string{"addrs:a"}
	first, err := clusterForTest(t).MasterOfSlot(cluster.Slot(keys[0]))
	require.NoError(t, err)
	for i := 0; len(keys) < 2; i++ {
		k := fmt.Sprintf("addrs:%d", i)
		m, err := clusterForTest(t).MasterOfSlot(cluster.Slot(k))
		require.NoError(t, err)
		if m != first {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		_, err := c.Do(ctx, "SET", k, 7)
		require.NoError(t, err)
	}
	// The first key's master is "reached" at an address where nothing
	// listens: its move fails, the other key's succeeds.
	to.Migration = &shard.Migration{Addrs: map[string]string{first.Addr: deadAddr}, Armed: true}
	require.NoError(t, c.StartMigration(ctx, to))
	info, ok := c.Migration()
	require.True(t, ok)
	assert.Equal(t, shard.PhaseArmed, info.Phase, "Armed: no fence to wait for")
	_, err = c.Do(ctx, "INCR", keys[0])
	var me *shard.MigrateError
	require.ErrorAs(t, err, &me, "the move to the mapped address fails")
	require.ErrorIs(t, err, shard.ErrMigration)
	assert.Equal(t, keys[0], me.Key)
	v, err := redis.Int(c.Do(ctx, "INCR", keys[1]))
	require.NoError(t, err)
	assert.Equal(t, 8, v)
	require.NoError(t, c.FinishMigration())
	_, err = c.Do(ctx, "DEL", keys[1])
	require.NoError(t, err)

	// A From in to.Migration is refused: the old topology is the client's.
	from := ringConfig(servers)
	to.Migration = &shard.Migration{From: &from}
	err = c.StartMigration(ctx, to)
	require.ErrorIs(t, err, shard.ErrMigration)
	assert.Contains(t, err.Error(), "From must be nil")
}
