package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestClusterReplicaReadFallsBackFromALoadingReplica: a read sent to a
// replica that answers LOADING (reloading its data after a restart or a
// full resync; CLUSTER SHARDS still lists it as online) goes to the
// master at once, rather than back to the same replica until MaxRetryWait.
func TestClusterReplicaReadFallsBackFromALoadingReplica(t *testing.T) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	cfg.Cluster.MaxRetryWait = time.Second
	c := newClient(t, cfg)
	m := rc.Masters()[0]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	key, _ := keyOnMaster(t, rc, m, "loading")
	for i := 0; i < 300; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("%s:%d", key, i), fmt.Sprintf("%d:%01000d", i, 0))
		require.NoError(t, err)
	}
	_, err = direct(t, m.Addr).Do("WAIT", 1, 2000)
	require.NoError(t, err)
	_, err = rep.Do("CONFIG", "SET", "key-load-delay", "10000") // 10 ms a key: 3 s of LOADING
	require.NoError(t, err)
	_, err = rep.Do("CONFIG", "SET", "loading-process-events-interval-bytes", "1024")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		conn, err := redis.Dial("tcp", rep.Addr)
		if err != nil {
			done <- err
			return
		}
		defer conn.Close()
		_, err = conn.Do("DEBUG", "RELOAD")
		done <- err
	}()
	t.Cleanup(func() { <-done })
	// Wait until the replica answers LOADING.
	probe := direct(t, rep.Addr)
	probe.Do("READONLY")
	waitFor(t, 5*time.Second, "replica loading", func() bool {
		_, err := probe.Do("GET", key)
		return err != nil && len(err.Error()) >= 7 && err.Error()[:7] == "LOADING"
	})
	start := time.Now()
	v, err := redis.String(c.Do(ctx, "GET", key+":7"))
	t.Logf("GET took %v (%d bytes, err %v)", time.Since(start), len(v), err)
	require.NoError(t, err, "the master holds the key; the read should not fail because its replica is loading")
	require.Equal(t, fmt.Sprintf("%d:%01000d", 7, 0), v)
}
