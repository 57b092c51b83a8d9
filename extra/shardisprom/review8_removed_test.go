package shardisprom_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// labelValues gathers reg and returns, per label name, the values seen
// in any series. It does not fail the test, so that conditions can call
// it.
func labelValues(reg *prometheus.Registry) (map[string]map[string]bool, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]bool{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if out[l.GetName()] == nil {
					out[l.GetName()] = map[string]bool{}
				}
				out[l.GetName()][l.GetValue()] = true
			}
		}
	}
	return out, nil
}

// TestReview8NodeRemovedFromClusterHasNoSeries: a replica that serves
// reads, then is removed from the cluster (reset and forgotten by every
// other node), leaves neither collector series nor duration series: its
// last values are not exported for ever. The masters keep theirs. No
// label value is a key, however many keys the workload touched.
func TestReview8NodeRemovedFromClusterHasNoSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	d := shardisprom.NewDurations(nil, nil)
	ctx := context.Background()
	c, err := shard.New(ctx, shard.Config{
		Mode:    shard.ModeCluster,
		Seeds:   rc.Seeds(),
		Pool:    pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second},
		Health:  shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 2, Timeout: 300 * time.Millisecond},
		Cluster: shard.ClusterOptions{RefreshInterval: 200 * time.Millisecond, ReadFrom: shard.ReadReplicaRandom},
		Hooks:   d.Hooks(),
	})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(shardisprom.NewCollector(c, nil), d)

	masters := rc.Masters()
	require.Len(t, masters, 3)
	victim, err := rc.ReplicaOf(masters[0])
	require.NoError(t, err)
	// Reads of masters[0]'s slots go to its only replica, the victim.
	for i := range 200 {
		key := fmt.Sprintf("r8card-%d", i)
		_, err := c.Do(ctx, "SET", key, "v")
		require.NoError(t, err)
		owner, err := rc.MasterOfSlot(cluster.Slot(key))
		require.NoError(t, err)
		if owner.Addr == masters[0].Addr {
			_, err = c.Do(ctx, "GET", key)
			require.NoError(t, err)
		}
	}
	labels, err := labelValues(reg)
	require.NoError(t, err)
	require.True(t, labels["node"][victim.Addr], "the replica serves reads: %v", labels["node"])
	for name, values := range labels {
		for v := range values {
			assert.NotContains(t, v, "r8card", "label %s has a key for value", name)
		}
	}
	assert.LessOrEqual(t, len(labels["node"]), 6, "one node label value per server: %v", labels["node"])

	// Remove the replica: a hard reset gives it a new ID and makes it
	// forget the others, then every other node forgets its old ID.
	id, err := victim.Do("CLUSTER", "MYID")
	require.NoError(t, err)
	_, err = victim.Do("CLUSTER", "RESET", "HARD")
	require.NoError(t, err)
	for _, s := range rc.Nodes {
		if s == victim {
			continue
		}
		_, err := s.Do("CLUSTER", "FORGET", strings.TrimSpace(id))
		require.NoError(t, err, "FORGET on %s", s.Addr)
	}

	require.Eventually(t, func() bool {
		// Reads go on: the gone replica's series must not come back.
		for i := range 20 {
			c.Do(ctx, "GET", fmt.Sprintf("r8card-%d", i)) //nolint:errcheck // only the series matter
		}
		labels, err := labelValues(reg)
		return err == nil && !labels["node"][victim.Addr]
	}, 20*time.Second, 50*time.Millisecond, "the removed replica's series are still exported")
	labels, err = labelValues(reg)
	require.NoError(t, err)
	for _, m := range masters {
		assert.True(t, labels["node"][m.Addr], "master %s keeps its series", m.Addr)
	}
}
