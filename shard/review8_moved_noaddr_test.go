package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestReview8CommandFollowsAMovedWithoutAddress: with
// cluster-preferred-endpoint-type hostname and nodes that announce no
// hostname, a slot's old owner answers MOVED with "?" for the host; the
// client can only wait for a refresh to learn where the slot went. Each
// such MOVED counted against MaxRedirects (5) although it was not
// followed, so a command that met it within MinRefreshInterval of the
// last refresh (the refresh it asked for held back by the rate limit)
// ran out of redirects before the refresh came: "too many redirects",
// with a healthy cluster. It waits now, within MaxRetryWait.
func TestReview8CommandFollowsAMovedWithoutAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := startNoHostnameCluster(t)
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	cfg.Cluster.MinRefreshInterval = time.Second // longer than the MOVEDs' backoffs add up to
	cfg.Health.Interval = -1                     // no refresh but the one the MOVED asks for
	c := newClient(t, cfg)
	ms := rc.Masters()
	require.Len(t, ms, 3)
	key := nameOnFirstMaster()
	moveSlot(t, cluster.Slot(key), ms[0], ms[1], ms)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := c.Do(ctx, "SET", key, "v")
	require.NoError(t, err, "the refresh the MOVED asked for shows the new owner")
	v, err := ms[1].Do("GET", key)
	require.NoError(t, err)
	require.Equal(t, "v", v)
}

// startNoHostnameCluster starts a cluster of three masters that prefer
// hostname endpoints (cluster-preferred-endpoint-type hostname) and
// announce none: a MOVED then names "?" for the host.
func startNoHostnameCluster(t *testing.T) *redistest.Cluster {
	t.Helper()
	return redistest.StartClusterTB(t, 3, 0, redistest.Options{Args: []string{"--cluster-preferred-endpoint-type", "hostname"}})
}

// nameOnFirstMaster returns the first name "unknown-endpoint:<i>" whose
// slot the first of three masters owns.
func nameOnFirstMaster() string {
	for i := 0; ; i++ {
		name := fmt.Sprintf("unknown-endpoint:%d", i)
		if cluster.Slot(name) <= 5000 { // the first master owns 0-5460
			return name
		}
	}
}
