package shard_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// instanceNames counts, over every server, the connections of the client
// instance inst by name, as CLIENT LIST shows them: plain names
// ("shardis:<inst>:<topology>") under their topology, beacons (with a
// ">") under "beacon".
func instanceNames(t *testing.T, servers []*redistest.Server, inst string) map[string]int {
	t.Helper()
	prefix := "shardis:" + inst + ":"
	got := map[string]int{}
	for _, s := range servers {
		list, err := clientList(s)
		require.NoError(t, err)
		for _, ci := range list {
			rest, ok := strings.CutPrefix(ci["name"], prefix)
			switch {
			case !ok:
			case strings.Contains(rest, ">"):
				got["beacon"]++
			default:
				got[rest]++
			}
		}
	}
	return got
}

// namesLoad keeps 8 goroutines sending commands through c (so that the
// automatic pipelines' connections never idle) until stop is called,
// which returns the errors they met.
func namesLoad(c *shard.Client, prefix string) (stop func() []error) {
	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for ctx.Err() == nil {
				_, err := c.Do(ctx, "INCR", fmt.Sprintf("%s:%d", prefix, r.IntN(200)))
				if err != nil && ctx.Err() == nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	return func() []error {
		cancel()
		wg.Wait()
		return errs
	}
}

// blockedPop holds one of c's connections in a BLPOP until the key is
// pushed; wait returns its error.
func blockedPop(c *shard.Client, key string) (wait func() error) {
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), "BLPOP", key, 20)
		done <- err
	}()
	return func() error { return <-done }
}

// TestConnectionNamesFollowRunTimeMigration: with client_name=auto, a
// ring client that migrates at run time names its connections after the
// topology it routes by — the old one while the migration waits for the
// fence, the new one from the fence on and after FinishMigration — on
// every node, including the connections of the automatic pipelines
// (under constant load they never idle). The names are compared with the
// convention's formula, shardis:<instance>:<TopologyID of the config>.
func TestConnectionNamesFollowRunTimeMigration(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	small := ringConfig(servers[:3])
	small.Pool.ClientName = shard.AutoClientName
	big := ringConfig(servers)
	big.Pool.ClientName = shard.AutoClientName
	idA, idB := shard.TopologyID(small), shard.TopologyID(big)
	require.NotEqual(t, idA, idB)
	c := newClient(t, small)
	inst := c.InstanceID()

	stop := namesLoad(c, "load")
	waitFor(t, 5*time.Second, "connections named by A on the old nodes", func() bool {
		return instanceNames(t, servers, inst)[idA] >= 3
	})
	got := instanceNames(t, servers, inst)
	assert.Equal(t, []string{idA}, slices.Sorted(maps.Keys(got)), "before: only A: %v", got)

	require.NoError(t, c.StartMigration(ctx, big))
	// Waiting behind the fence: it routes by A, and says so.
	got = instanceNames(t, servers, inst)
	assert.Zero(t, got[idB], "waiting: no connection named by B yet: %v", got)
	assert.Equal(t, 3, got["beacon"], "one beacon per old node: %v", got)
	assert.Positive(t, got[idA], "waiting: named by A: %v", got)

	require.NoError(t, c.ArmMigration()) // the fence's switch: routes by B
	waitFor(t, 5*time.Second, "no connection named by A under load", func() bool {
		got := instanceNames(t, servers, inst)
		return got[idA] == 0 && got[idB] > 0
	})

	require.NoError(t, c.FinishMigration())
	waitFor(t, 5*time.Second, "the beacons to close", func() bool {
		return instanceNames(t, servers, inst)["beacon"] == 0
	})
	for _, err := range stop() {
		t.Error(err)
	}
	got = instanceNames(t, servers, inst)
	assert.Zero(t, got[idA], "after FinishMigration: nothing named by A: %v", got)
	assert.Positive(t, got[idB], "after FinishMigration: named by B: %v", got)
	assert.Equal(t, []string{idB}, slices.Sorted(maps.Keys(got)), "only B: %v", got)
	// Every node of B has the client's connections, each named by B.
	for i, s := range servers {
		assert.Positive(t, instanceNames(t, []*redistest.Server{s}, inst)[idB], "node %d", i)
	}
}

// TestConnectionNamesFollowFinishAndAbort: the renames of the steps
// without a fence switch, on every node. FinishMigration of a migration that never
// passed its fence switches the routing itself; AbortMigration before
// arming returns to the old topology; AbortMigration once armed keeps
// routing by the new one until the reverse fence, then by the old one.
func TestConnectionNamesFollowFinishAndAbort(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	small := ringConfig(servers[:3])
	small.Pool.ClientName = shard.AutoClientName
	big := ringConfig(servers)
	big.Pool.ClientName = shard.AutoClientName
	// No health checks: their PINGs borrow (and so rename) idle
	// connections, which would hide a connection given back unrenamed.
	small.Health.Interval, big.Health.Interval = -1, -1
	idA, idB := shard.TopologyID(small), shard.TopologyID(big)
	c := newClient(t, small)
	inst := c.InstanceID()
	touch := func() { // use a connection to every node
		for i := range 200 {
			_, err := c.Do(ctx, "SET", fmt.Sprintf("fa:%d", i), i)
			require.NoError(t, err)
		}
	}
	only := func(id, when string) {
		t.Helper()
		touch()
		got := instanceNames(t, servers, inst)
		delete(got, "beacon")
		assert.Equal(t, map[string]int{id: got[id]}, got, "%s: only %s", when, id)
		assert.Positive(t, got[id], "%s: named by %s", when, id)
	}
	only(idA, "before")

	// Abort before arming: routing by A throughout.
	require.NoError(t, c.StartMigration(ctx, big))
	only(idA, "waiting")
	require.NoError(t, c.AbortMigration(ctx))
	only(idA, "aborted before arming")

	// Finish without the fence (the routing switches at the finish),
	// while a blocking command holds a connection: it is renamed when it
	// comes back.
	require.NoError(t, c.StartMigration(ctx, big))
	const popKey = "names:pop"
	waitPop := blockedPop(c, popKey)
	blocked := func() bool {
		for _, s := range servers {
			list, err := clientList(s)
			require.NoError(t, err)
			for _, ci := range list {
				if ci["cmd"] == "blpop" && strings.HasPrefix(ci["name"], "shardis:"+inst+":") {
					return true
				}
			}
		}
		return false
	}
	waitFor(t, 5*time.Second, "the BLPOP to block", blocked)
	require.NoError(t, c.FinishMigration())
	require.True(t, blocked(), "the BLPOP still holds its connection")
	_, err := c.Do(ctx, "LPUSH", popKey, "x")
	require.NoError(t, err)
	require.NoError(t, waitPop())
	waitFor(t, 5*time.Second, "the BLPOP's connection renamed as it came back", func() bool {
		return instanceNames(t, servers, inst)[idA] == 0 // nothing borrows meanwhile
	})
	only(idB, "finished without arming")

	// Back to A: armed, aborted (still routing by B, moving forward),
	// the reverse fence armed (routing by A), finished.
	require.NoError(t, c.StartMigration(ctx, small))
	require.NoError(t, c.ArmMigration())
	only(idA, "armed B -> A")
	require.NoError(t, c.AbortMigration(ctx))
	only(idA, "aborted once armed: routes by A (the migration's new topology) until the reverse fence")
	require.NoError(t, c.ArmMigration())
	only(idB, "the reverse fence armed")
	require.NoError(t, c.FinishMigration())
	only(idB, "finished")
}

// TestConnectionNamesFollowRunTimeSwitchIntoCluster: a ring client that
// becomes a cluster client at run time names its connections, on the
// ring's shards and on the cluster's nodes, after the cluster.
func TestConnectionNamesFollowRunTimeSwitchIntoCluster(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	rc := ringConfig(servers)
	rc.Pool.ClientName = shard.AutoClientName
	to := intoCluster(t, rc)
	idRing, idCluster := shard.TopologyID(rc), shard.TopologyID(to)
	c := newClient(t, rc)
	inst := c.InstanceID()
	all := append(slices.Clone(servers), clusterForTest(t).Nodes...)
	stop := namesLoad(c, "{names}cl")
	waitFor(t, 5*time.Second, "connections named by the ring", func() bool {
		return instanceNames(t, servers, inst)[idRing] >= 1
	})
	require.NoError(t, c.StartMigration(ctx, to))
	assert.Zero(t, instanceNames(t, all, inst)[idCluster], "waiting: routes by the ring")
	require.NoError(t, c.ArmMigration())
	waitFor(t, 5*time.Second, "no connection named by the ring", func() bool {
		got := instanceNames(t, all, inst)
		return got[idRing] == 0 && got[idCluster] > 0
	})
	require.NoError(t, c.FinishMigration())
	for _, err := range stop() {
		t.Error(err)
	}
	got := instanceNames(t, all, inst)
	assert.Equal(t, map[string]int{idCluster: got[idCluster]}, got, "only the cluster's name")
}
