package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
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
	reloadSlowly(t, rep, key, 10*time.Millisecond) // 3 s of LOADING
	start := time.Now()
	v, err := redis.String(c.Do(ctx, "GET", key+":7"))
	t.Logf("GET took %v (%d bytes, err %v)", time.Since(start), len(v), err)
	require.NoError(t, err, "the master holds the key; the read should not fail because its replica is loading")
	require.Equal(t, fmt.Sprintf("%d:%01000d", 7, 0), v)
}

// reloadSlowly makes the cluster replica rep reload its data (DEBUG
// RELOAD) at perKey a key, so that it answers LOADING for a while, and
// returns once a read of key there is refused with LOADING: probe is the
// read-only connection that saw it, and reloaded waits for the reload to
// end and returns its error (the test's end waits for it too).
func reloadSlowly(t *testing.T, rep *redistest.Server, key string, perKey time.Duration) (probe redis.Conn, reloaded func() error) {
	t.Helper()
	_, err := rep.Do("CONFIG", "SET", "key-load-delay", strconv.FormatInt(perKey.Microseconds(), 10))
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
	var (
		once sync.Once
		rerr error
	)
	reloaded = func() error {
		once.Do(func() { rerr = <-done })
		return rerr
	}
	t.Cleanup(func() {
		hurryReload(t, rep) // the test is over: the rest need not be slow
		_ = reloaded()
	})
	probe = direct(t, rep.Addr)
	_, err = probe.Do("READONLY")
	require.NoError(t, err)
	waitFor(t, 5*time.Second, "the replica loading", func() bool {
		_, err := probe.Do("GET", key)
		return err != nil && strings.HasPrefix(err.Error(), "LOADING")
	})
	return probe, reloaded
}

// hurryReload makes a reload that reloadSlowly started on s load its
// remaining keys at full speed (key-load-delay 0; Redis reads it before
// each key), once the test needs s loading no longer.
func hurryReload(t *testing.T, s *redistest.Server) {
	t.Helper()
	_, err := s.Do("CONFIG", "SET", "key-load-delay", "0")
	if err != nil {
		t.Errorf("CONFIG SET key-load-delay 0 on %s: %v", s.Addr, err)
	}
}
