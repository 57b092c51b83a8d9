package shard_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestSentinelNoReplicasWaitsLikeMasterDown: a master with
// min-replicas-to-write (which the Sentinel docs advise, so that a master
// cut off from its replicas stops taking writes that its demotion would
// lose) refuses writes with NOREPLICAS while its replica lags: nothing
// ran, as with MASTERDOWN. With FailoverWait the write asks for a query
// of the Sentinels (the master may be on the wrong side of a partition
// and already replaced) and waits, then runs once the replica is back;
// before, it failed at once.
func TestSentinelNoReplicasWaitsLikeMasterDown(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	o.DownAfter = 30 * time.Second // no failover while the replica is stopped
	set := redistest.StartSentinelsTB(t, o)
	cfg := sentinelConfig(set)
	cfg.Sentinel.FailoverWait = 20 * time.Second
	cfg.Sentinel.RefreshInterval = -1 // only the refusal may ask for a query
	c := newClient(t, cfg)
	ctx := context.Background()
	m, err := set.Master(0)
	require.NoError(t, err)
	rep, err := set.Replica(0)
	require.NoError(t, err)
	_, err = m.Do("CONFIG", "SET", "min-replicas-to-write", "1", "min-replicas-max-lag", "1")
	require.NoError(t, err)
	_, err = c.Do(ctx, "SET", "norep", "1")
	require.NoError(t, err)

	require.NoError(t, rep.Pause())
	resumed := false
	defer func() {
		if !resumed {
			rep.Resume()
		}
	}()
	waitFor(t, 30*time.Second, "the master to refuse writes", func() bool {
		_, err := m.Do("SET", "norep:probe", "x")
		return err != nil && strings.Contains(err.Error(), "NOREPLICAS")
	})
	before := c.Stats().Sentinel[0].Queries

	var wg sync.WaitGroup
	var werr error
	wg.Go(func() { _, werr = c.Do(ctx, "SET", "norep", "2") })
	waitFor(t, 10*time.Second, "a query of the Sentinels", func() bool { return c.Stats().Sentinel[0].Queries > before })
	require.NoError(t, rep.Resume())
	resumed = true
	wg.Wait()
	require.NoError(t, werr)
	got, err := redis.String(c.Do(ctx, "GET", "norep"))
	require.NoError(t, err)
	require.Equal(t, "2", got)
}
