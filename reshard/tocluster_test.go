package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveLoad is goroutines of INCR, SET, GET, cross-node MGET and
// pipelines on one client, counting every acknowledged increment and
// every failure.
type liveLoad struct {
	c        *shard.Client
	counters int
	acked    []atomic.Int64 // acknowledged INCRs per counter
	ops      atomic.Int64
	failed   atomic.Int64
	mu       sync.Mutex
	errs     []error // the first few failures
	stop     chan struct{}
	wg       sync.WaitGroup
}

func startLiveLoad(c *shard.Client, counters, workers int) *liveLoad {
	l := &liveLoad{c: c, counters: counters, acked: make([]atomic.Int64, counters), stop: make(chan struct{})}
	for w := 0; w < workers; w++ {
		l.wg.Add(1)
		go l.run(w)
	}
	return l
}

func (l *liveLoad) fail(err error) {
	l.failed.Add(1)
	l.mu.Lock()
	if len(l.errs) < 5 {
		l.errs = append(l.errs, err)
	}
	l.mu.Unlock()
}

func (l *liveLoad) run(w int) {
	defer l.wg.Done()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(w), 7))
	last := map[string]int{} // this worker's own keys: the value it set last
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		l.ops.Add(1)
		switch i % 5 {
		case 0:
			k := rng.IntN(l.counters)
			if _, err := l.c.Do(ctx, "INCR", fmt.Sprintf("tc:n:%d", k)); err != nil {
				l.fail(fmt.Errorf("INCR: %w", err))
				continue
			}
			l.acked[k].Add(1)
		case 1:
			k := fmt.Sprintf("tc:s:%d:%d", w, rng.IntN(20))
			if _, err := l.c.Do(ctx, "SET", k, i); err != nil {
				l.fail(fmt.Errorf("SET: %w", err))
				continue
			}
			last[k] = i
		case 2:
			k := fmt.Sprintf("tc:s:%d:%d", w, rng.IntN(20))
			v, err := redis.Int(l.c.Do(ctx, "GET", k))
			if errors.Is(err, redis.ErrNil) {
				err = nil
				v = -1
			}
			want, ok := last[k]
			if !ok {
				want = -1
			}
			if err != nil || v != want {
				l.fail(fmt.Errorf("GET %s: %d, %v; want %d", k, v, err, want))
			}
		case 3:
			keys := []any{fmt.Sprintf("tc:n:%d", rng.IntN(l.counters)), fmt.Sprintf("tc:n:%d", rng.IntN(l.counters)),
				fmt.Sprintf("tc:s:%d:%d", w, rng.IntN(20))}
			vals, err := redis.Values(l.c.Do(ctx, "MGET", keys...))
			if err != nil || len(vals) != len(keys) {
				l.fail(fmt.Errorf("MGET: %d values, %v", len(vals), err))
			}
		case 4: // a pipeline: two INCRs and a GET on keys of any nodes
			a, b := rng.IntN(l.counters), rng.IntN(l.counters)
			p := l.c.Pipeline()
			p.Send("INCR", fmt.Sprintf("tc:n:%d", a))
			p.Send("INCR", fmt.Sprintf("tc:n:%d", b))
			p.Send("GET", fmt.Sprintf("tc:n:%d", rng.IntN(l.counters)))
			res, err := p.Exec(ctx)
			if err != nil || len(res) != 3 {
				l.fail(fmt.Errorf("pipeline: %d results, %v", len(res), err))
				continue
			}
			for j, k := range []int{a, b} {
				if res[j].Err != nil {
					l.fail(fmt.Errorf("pipeline INCR: %w", res[j].Err))
				} else {
					l.acked[k].Add(1)
				}
			}
			if res[2].Err != nil {
				l.fail(fmt.Errorf("pipeline GET: %w", res[2].Err))
			}
		}
	}
}

// halt stops the load and returns its failures.
func (l *liveLoad) halt() []error {
	close(l.stop)
	l.wg.Wait()
	return l.errs
}

// TestRingClientMovesIntoAClusterLive takes a live ring client of three
// shards into a three-master cluster at run time under load (8
// goroutines of INCR, SET, GET, MGET and pipelines): StartMigration with the
// cluster's config, the mover's fence and move, a clean verification,
// FinishMigration. No operation fails, every counter equals its
// acknowledged increments, nothing is left on the ring, and afterwards
// the same client follows a slot that the cluster moves by itself
// (MOVED), and a subscription opened on the ring receives what is
// published through the cluster.
func TestRingClientMovesIntoAClusterLive(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from := mustParse(t, ringURL(servers, []string{"s0", "s1", "s2"}, nil))
	to := mustParse(t, "redis-cluster://"+strings.Join(rc.Seeds(), ",")+"?read_timeout=5s&health_interval=200ms")
	const counters, cold = 500, 3000
	fill(t, from, "tc:n", counters) // counter i starts at i
	fill(t, from, "tc:cold", cold)  // keys only the mover moves

	cfg := from
	cfg.Pool.ClientName = shard.AutoClientName
	c := newClient(t, cfg)
	sub, err := c.Subscribe(ctx, "tc:news")
	require.NoError(t, err)
	defer sub.Close()

	load := startLiveLoad(c, counters, 8)
	defer func() {
		select {
		case <-load.stop:
		default:
			load.halt()
		}
	}()
	waitFor(t, 10*time.Second, "load before the migration", func() bool { return load.ops.Load() > 500 })

	require.NoError(t, c.StartMigration(ctx, to))
	info, ok := c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase)
	_, isRing := c.Router().(*shard.RingRouter)
	require.True(t, isRing, "until the fence, the client routes by the ring: %T", c.Router())

	// The mover: the fence (it waits for every beacon), then the move and
	// its verification, while the load goes on.
	waitFor(t, 10*time.Second, "the beacons", func() bool { return reshard.CheckClients(ctx, from, to, false) == nil })
	require.NoError(t, reshard.Arm(ctx, from, to, reshard.ArmOptions{}))
	waitArmed(t, c, "the client to see the fence armed")
	_, isCluster := c.Router().(*shard.ClusterRouter)
	require.True(t, isCluster, "armed, the client routes by the cluster: %T", c.Router())
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, KeysPerSecond: 2000, Batch: 50})
	require.NoError(t, err)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced, "misplaced: %v", rep.Verify.Samples)
	assert.Zero(t, rep.Verify.Pending)
	waitFor(t, 10*time.Second, "load after the move", func() bool { return load.ops.Load() > 3000 })
	require.NoError(t, c.FinishMigration())
	_, ok = c.Migration()
	require.False(t, ok)
	before := load.ops.Load()
	waitFor(t, 10*time.Second, "load after FinishMigration", func() bool { return load.ops.Load() > before+500 })
	errs := load.halt()
	require.Zero(t, load.failed.Load(), "failed operations (first ones): %v", errs)
	t.Logf("%d operations without a failure; the mover moved %d keys", load.ops.Load(), rep.Moved)
	require.NoError(t, reshard.ClearFence(ctx, from, to))

	// Nothing is left on the ring; every key is on its cluster master.
	for _, s := range servers {
		size, err := strconvAtoi(s.Do("DBSIZE"))
		require.NoError(t, err)
		assert.Zero(t, size, "ring shard %s is empty", s.Addr)
	}
	vr, err := reshard.Verify(ctx, to, reshard.VerifyOptions{})
	require.NoError(t, err)
	assert.Zero(t, vr.Misplaced, "misplaced: %v", vr.Samples)
	// Counters: read by a plain cluster client of its own.
	plain := newClient(t, to)
	for i := 0; i < counters; i++ {
		k := fmt.Sprintf("tc:n:%d", i)
		v, err := redis.Int64(plain.Do(ctx, "GET", k))
		require.NoError(t, err, k)
		assert.Equal(t, int64(i)+load.acked[i].Load(), v, "counter %s", k)
	}

	coldKeys := make([]any, cold)
	for i := range coldKeys {
		coldKeys[i] = fmt.Sprintf("tc:cold:%d", i)
	}
	coldVals, err := redis.Ints(plain.Do(ctx, "MGET", coldKeys...))
	require.NoError(t, err)
	require.Len(t, coldVals, cold)
	for i, v := range coldVals {
		require.Equal(t, i, v, "tc:cold:%d", i)
	}

	// The cluster moves the slot of a counter by itself: the same client
	// follows (MOVED) and keeps counting.
	const moved = "tc:n:0"
	slot := cluster.Slot(moved)
	src, err := rc.MasterOfSlot(slot)
	require.NoError(t, err)
	dst, err := rc.OtherMaster(src)
	require.NoError(t, err)
	_, err = redistest.MoveSlot(ctx, slot, src, dst, rc.Masters(), redistest.SlotMoveOptions{})
	require.NoError(t, err)
	movedBefore := movedCount(c)
	v, err := redis.Int64(c.Do(ctx, "INCR", moved))
	require.NoError(t, err)
	assert.Equal(t, load.acked[0].Load()+1, v)
	assert.Greater(t, movedCount(c), movedBefore, "the client was redirected")
	owner, err := c.Router().Route(moved)
	require.NoError(t, err)
	assert.Equal(t, dst.Addr, owner.Addr, "the client's slot table follows the move")

	// The subscription opened on the ring followed the client into the
	// cluster.
	waitFor(t, 10*time.Second, "a message through the cluster", func() bool {
		if _, err := c.Do(ctx, "PUBLISH", "tc:news", "hello"); err != nil {
			return false
		}
		for {
			rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			v, err := sub.Receive(rctx)
			cancel()
			if err != nil {
				return false
			}
			if m, ok := v.(redis.Message); ok && m.Channel == "tc:news" && string(m.Data) == "hello" {
				return true
			}
		}
	})
}

// movedCount sums the MOVED redirects the client has seen.
func movedCount(c *shard.Client) int64 {
	var n int64
	for _, ns := range c.Stats().Nodes {
		n += ns.Moved
	}
	return n
}

// TestRingClientIntoClusterRollbackWithTheMover turns a live ring
// client's migration into a cluster around at half way, after the mover
// armed it: the client keeps routing by the cluster until the reverse
// fence (cluster -> ring, its marker on the master of its slot), the mover
// moves everything back, and FinishMigration leaves a ring client with
// every key, and the increments made in between, on the ring.
func TestRingClientIntoClusterRollbackWithTheMover(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from := mustParse(t, ringURL(servers, []string{"s0", "s1", "s2"}, nil))
	to := mustParse(t, "redis-cluster://"+strings.Join(rc.Seeds(), ",")+"?read_timeout=5s&health_interval=200ms")
	const n = 3000
	fill(t, from, "rbc", n)
	cfg := from
	cfg.Pool.ClientName = shard.AutoClientName
	c := newClient(t, cfg)
	require.NoError(t, c.StartMigration(ctx, to))
	waitFor(t, 10*time.Second, "the beacons", func() bool { return reshard.CheckClients(ctx, from, to, false) == nil })
	mctx, cancel := context.WithCancel(ctx)
	rep, err := reshard.Move(mctx, reshard.Options{From: from, To: to, KeysPerSecond: 2000, Batch: 20,
		Progress: func(p reshard.Progress) {
			if p.Moved >= n/2 {
				cancel()
			}
		}})
	cancel()
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, rep.Moved, int64(n), "stopped part-way")
	require.Positive(t, rep.Moved)
	waitArmed(t, c, "the client to see the fence armed")

	require.NoError(t, c.AbortMigration(ctx))
	info, ok := c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase, "the rollback waits for its own fence")
	_, isCluster := c.Router().(*shard.ClusterRouter)
	require.True(t, isCluster, "until then the client routes by the cluster: %T", c.Router())
	incrEvens(t, c, "rbc", n)
	moveBack(t, from, to, 10*time.Second)
	waitArmed(t, c, "the client to see the reverse fence armed")
	_, isRing := c.Router().(*shard.RingRouter)
	require.True(t, isRing, "the reverse armed, the client routes by the ring: %T", c.Router())
	require.NoError(t, c.FinishMigration())
	require.NoError(t, reshard.ClearFence(ctx, to, from))
	require.NoError(t, reshard.ClearFence(ctx, from, to))
	assertBackOnTheRing(t, rc, servers)
	requireFillIncremented(t, c, "rbc", n)
	vr, err := reshard.Verify(ctx, from, reshard.VerifyOptions{})
	require.NoError(t, err)
	assert.Zero(t, vr.Misplaced)
}

// TestFinishOutOfACluster finishes a migration whose old topology is a
// cluster (the way back of a ring moved into one): the fence's marker
// sits on the master of its slot alone, and the other masters answer
// MOVED to its DEL, which is no failure.
func TestFinishOutOfACluster(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ring := mustParse(t, ringURL(servers, []string{"s0", "s1"}, nil))
	cl := mustParse(t, "redis-cluster://"+strings.Join(rc.Seeds(), ",")+"?read_timeout=5s")
	const n = 100
	fill(t, cl, "foc", n)
	rep, err := reshard.Move(ctx, reshard.Options{From: cl, To: ring, Finish: true})
	require.NoError(t, err)
	assert.True(t, rep.Finished, "the fence is cleared")
	assert.Equal(t, int64(n), rep.Moved)
	assertBackOnTheRing(t, rc, servers)
}

// assertBackOnTheRing checks that nothing is left on the cluster's
// masters (markers included) and that no marker is left on the ring's
// servers, once every key moved from the cluster to the ring.
func assertBackOnTheRing(t *testing.T, rc *redistest.Cluster, servers []*redistest.Server) {
	t.Helper()
	for _, m := range rc.Masters() {
		size, err := strconvAtoi(m.Do("DBSIZE"))
		require.NoError(t, err)
		assert.Zero(t, size, "nothing is left on cluster master %s (markers included)", m.Addr)
	}
	for _, s := range servers {
		keys, err := s.Do("KEYS", "shardis:migration:*")
		require.NoError(t, err)
		assert.Empty(t, keys, "no marker left on %s", s.Addr)
	}
}
