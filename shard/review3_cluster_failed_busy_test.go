package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"
)

// TestFailedNodeStaysWhileTheMastersAreBusy: a failed replica that the
// cluster still lists is kept by the client. A refresh that meets every
// master busy with a script (BUSY to CLUSTER NODES and CLUSTER SHARDS
// alike; the replicas give the topology) learns nothing about it: BUSY is
// no refusal for good, as NOPERM is, so the replica must stay. It retired.
func TestFailedNodeStaysWhileTheMastersAreBusy(t *testing.T) {
	ctx := context.Background()
	rc, cfg := failedNodeCluster(t)
	cfg.Health.Interval = -1 // no health check marks the busy masters down
	c := newClient(t, cfg)

	victim, masters := failReplica(t, rc)
	present := func() bool { return len(nodeStats(c, victim.Addr)) > 0 }
	require.NoError(t, c.Refresh(ctx))
	require.True(t, present(), "the failed replica, still listed by the cluster, is kept")

	// Every master runs a script that loops until SCRIPT KILL.
	done := make(chan error, len(masters))
	for _, m := range masters {
		_, err := m.Do("CONFIG", "SET", "busy-reply-threshold", "50")
		require.NoError(t, err)
		conn, err := redis.Dial("tcp", m.Addr)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		go func() {
			_, err := conn.Do("EVAL", "while true do end", 0)
			done <- err
		}()
	}
	kill := func() {
		for _, m := range masters {
			_, _ = m.Do("SCRIPT", "KILL")
		}
	}
	t.Cleanup(func() {
		kill()
		for range masters {
			<-done
		}
	})
	waitFor(t, 10*time.Second, "every master busy", func() bool {
		for _, m := range masters {
			_, err := m.Do("PING")
			if err == nil || !strings.Contains(err.Error(), "BUSY") {
				return false
			}
		}
		return true
	})
	err := c.Refresh(ctx) // the replicas answer
	kept := present()
	kill()
	require.NoError(t, err)
	require.True(t, kept, "a refresh that met busy masters keeps the failed replica")
}
