package shard_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// waitReplicaChecked waits for two more health checks of the replica at
// addr, or its retirement: the second check that starts from now on
// starts after the first has ended (a health round waits for all its
// checks), and a replica that no longer serves reads leaves Stats (and is
// checked no more).
func waitReplicaChecked(t *testing.T, c *shard.Client, addr string, checks *atomic.Int64) {
	t.Helper()
	inStats := func() bool {
		for _, n := range c.Stats().Nodes {
			if n.Node.Addr == addr {
				return true
			}
		}
		return false
	}
	from := checks.Load()
	waitFor(t, 20*time.Second, "two health checks of the replica "+addr+", or its retirement", func() bool {
		return checks.Load() >= from+2 || !inStats()
	})
}

// readsSeeMaster reads k 50 times and fails the test unless every read
// returns the master's value v; why says what the replica holds instead.
func readsSeeMaster(ctx context.Context, t *testing.T, c *shard.Client, why string) {
	t.Helper()
	for i := range 50 {
		v, err := redis.String(c.Do(ctx, "GET", "k"))
		if err != nil || v != "v" {
			t.Fatalf("read %d: GET k = %q, %v; want v (%s)", i, v, err, why)
		}
	}
}

// countChecks makes cfg's health checks PING as usual and count the
// checks of the node at addr.
func countChecks(cfg *shard.Config, addr string) *atomic.Int64 {
	var n atomic.Int64
	cfg.Health.Check = func(ctx context.Context, conn redis.Conn, node shard.Node) error {
		if node.Addr == addr {
			n.Add(1)
		}
		return shard.CheckPing(ctx, conn, node)
	}
	return &n
}

// A replica that restarts between two health checks, while no read fails
// on it, comes back empty: the client's pool finds its old connections
// closed and dials new ones, and the next health PING succeeds. It must
// not serve reads from its empty data set until a query finds it synced:
// once a health check has run on it after the restart, every read of a
// key the master holds returns the value.
func TestSentinelReplicaRestartedBetweenHealthChecksServesNoReads(t *testing.T) {
	set := startSentinelSetApart(t)
	master, replica := shardServers(t, set, 0)
	cfg := sentinelConfig(set)
	cfg.Sentinel.ReadFrom = shard.ReadReplicaRandom
	cfg.Sentinel.RefreshInterval = -1 // no periodic query checks the replica
	// Health checks far enough apart that the restart falls between two.
	cfg.Health.Interval = time.Second
	checks := countChecks(&cfg, replica.Addr)
	c := newClient(t, cfg)
	ctx := context.Background()

	setKOnReplica(t, c, replica)
	// Reads are served by the replica, over pooled connections.
	for i := range 20 {
		if v, err := redis.String(c.Do(ctx, "GET", "k")); err != nil || v != "v" {
			t.Fatalf("read %d before the restart: GET k = %q, %v; want v", i, v, err)
		}
	}
	// Once restarted the replica cannot sync: it stays empty.
	if _, err := master.Do("ACL", "SETUSER", "harness", "-psync", "-sync"); err != nil {
		t.Fatal(err)
	}
	if err := replica.Restart(); err != nil {
		t.Fatal(err)
	}
	if n, err := replica.Do("DBSIZE"); err != nil || n != "0" {
		t.Fatalf("restarted replica: DBSIZE = %q, %v; want an empty replica", n, err)
	}
	waitReplicaChecked(t, c, replica.Addr, checks)
	readsSeeMaster(ctx, t, c, "the restarted replica is empty")
}
