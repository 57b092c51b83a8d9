package shard_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A replica that restarts without its data (no persistence) comes back
// empty and serves reads before its first sync with the master has
// brought the data back (replica-serve-stale-data yes, the default): a
// read sent there answered nil for a key the master holds, until the
// sync ended. Its read-only connections are now refused while it has no
// replication offset (as CLUSTER SLOTS leaves it out), and the reads go
// to the master; once synced it serves reads again.
func TestReview9ClusterReadSkipsAReplicaNotSynced(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	m := rc.Masters()[0]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	key, _ := keyOnMaster(t, rc, m, "review9unsynced")
	mc := direct(t, m.Addr)
	_, err = mc.Do("SET", key, "v")
	require.NoError(t, err)
	_, err = mc.Do("WAIT", 1, 2000)
	require.NoError(t, err)

	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	c := newClient(t, cfg)
	waitFor(t, 10*time.Second, "the replica to serve the key", func() bool {
		v, err := redis.String(c.Do(ctx, "GET", key))
		return err == nil && v == "v"
	})

	// The master holds the full sync back for 3 s once the replica asks.
	_, err = mc.Do("CONFIG", "SET", "repl-diskless-sync", "yes")
	require.NoError(t, err)
	_, err = mc.Do("CONFIG", "SET", "repl-diskless-sync-delay", "3")
	require.NoError(t, err)
	require.NoError(t, rep.Kill())
	// The RDB file the replica kept from its first sync would let it
	// resume where it was: gone, it starts empty, as after a host loss.
	require.NoError(t, os.Remove(filepath.Join(rep.Dir, "dump.rdb")))
	require.NoError(t, rep.Restart())
	// The replica is back, empty, waiting for its sync.
	probe := direct(t, rep.Addr)
	_, err = probe.Do("READONLY")
	require.NoError(t, err)
	info, err := redis.String(probe.Do("INFO", "replication"))
	require.NoError(t, err)
	require.Contains(t, info, "slave_repl_offset:0\r\n", "the replica has not synced yet")

	deadline := time.Now().Add(2 * time.Second)
	reads, nils := 0, 0
	for time.Now().Before(deadline) {
		v, err := redis.String(c.Do(ctx, "GET", key))
		reads++
		if err != nil || v != "v" {
			nils++
			if nils == 1 {
				t.Logf("read %d: %q, %v", reads, v, err)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	require.Zero(t, nils, "of %d reads while the replica was not synced, %d did not see the master's value", reads, nils)

	// Once synced, the replica serves reads again (by its own count).
	replicaGets := func() int {
		n, err := rep.CommandCalls("get")
		require.NoError(t, err)
		return n
	}
	before := replicaGets()
	waitFor(t, 15*time.Second, "reads served by the synced replica", func() bool {
		v, err := redis.String(c.Do(ctx, "GET", key))
		require.NoError(t, err)
		require.Equal(t, "v", v)
		return replicaGets() > before
	})
}
