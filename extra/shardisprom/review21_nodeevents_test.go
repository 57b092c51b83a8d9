package shardisprom_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nodeEventCounts gathers reg and returns shardis_node_events_total by
// "event node". It does not fail the test, so that conditions can call
// it.
func nodeEventCounts(reg *prometheus.Registry) (map[string]float64, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "shardis_node_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			if len(l) != 2 {
				return nil, fmt.Errorf("labels %v: want node and event only", l)
			}
			out[l["event"]+" "+l["node"]] = m.GetCounter().GetValue()
		}
	}
	return out, nil
}

// TestReview21NodeEventsCountedPerNodeRing: a ring shard that stops
// answering and comes back is marked down, then up. shardis_node_up only
// shows the state at the moment of a scrape, so a flap between two
// scrapes was invisible to Prometheus (OpenTelemetry had
// shardis.client.node.events): the events are counted per node, and
// only for the node they happened to.
func TestReview21NodeEventsCountedPerNodeRing(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	d := shardisprom.NewDurations(nil, nil)
	cfg := ringOver(servers, "r21ev", shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 1, Timeout: 300 * time.Millisecond})
	cfg.Hooks = d.Hooks()
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(shardisprom.NewCollector(c, nil), d)

	flaky, steady := servers[0], servers[1]
	require.NoError(t, flaky.Pause())
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = flaky.Resume()
		}
	})
	has := func(key string) func() bool {
		return func() bool {
			n, err := nodeEventCounts(reg)
			return err == nil && n[key] >= 1
		}
	}
	require.Eventually(t, has("down "+flaky.Addr), 30*time.Second, 20*time.Millisecond, "no down event for %s", flaky.Addr)
	require.NoError(t, flaky.Resume())
	resumed = true
	require.Eventually(t, has("up "+flaky.Addr), 30*time.Second, 20*time.Millisecond, "no up event for %s", flaky.Addr)

	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems, "the names and help follow Prometheus's rules")
	counts, err := nodeEventCounts(reg)
	require.NoError(t, err)
	assert.Zero(t, counts["down "+steady.Addr], "%s never went down: %v", steady.Addr, counts)
	assert.Equal(t, counts["down "+flaky.Addr], counts["up "+flaky.Addr], "every down was followed by an up: %v", counts)
}

// TestReview21NodeEventsCountedPerNodeCluster: a cluster failover shows
// in Prometheus as the dead master's down and its replica's promotion,
// each on its own node. Before, nothing but shardis_node_up (which goes
// back to 1 once the replica is the master) told that a failover had
// happened.
func TestReview21NodeEventsCountedPerNodeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and kills a master")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second})
	d := shardisprom.NewDurations(nil, nil)
	cfg := shard.Config{
		Mode:   shard.ModeCluster,
		Seeds:  rc.Seeds(),
		Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second},
		Health: shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 2, Timeout: 300 * time.Millisecond},
		Hooks:  d.Hooks(),
	}
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(shardisprom.NewCollector(c, nil), d)

	victim, err := rc.MasterOfSlot(0)
	require.NoError(t, err)
	replica, err := rc.ReplicaOf(victim)
	require.NoError(t, err)
	key := keyOn(t, c, victim.Addr, "r21failover-")
	require.NoError(t, victim.Kill())

	require.Eventually(t, func() bool {
		c.Do(ctx, "SET", key, "v") //nolint:errcheck // fails until the promotion
		n, err := nodeEventCounts(reg)
		return err == nil && n["replica_promoted "+replica.Addr] >= 1
	}, 60*time.Second, 50*time.Millisecond, "no replica_promoted event for %s", replica.Addr)
	counts, err := nodeEventCounts(reg)
	require.NoError(t, err)
	assert.Positive(t, counts["down "+victim.Addr], "%v", counts)
	assert.Equal(t, 1.0, counts["replica_promoted "+replica.Addr], "%v", counts)
	for k := range counts {
		assert.NotContains(t, k, "retired", "a retired node's series are deleted, not counted")
	}

	// The SETs sent to the dead master while the cluster failed it over
	// are its errors, retried, for a failure of its connection.
	errs := commandErrors(t, reg)
	onVictim := 0.0
	for k, v := range errs {
		node, rest, _ := strings.Cut(k, " ")
		if node != victim.Addr {
			continue
		}
		onVictim += v
		outcome, cause, _ := strings.Cut(rest, " ")
		assert.Equal(t, "retry", outcome, "%v", errs)
		assert.Contains(t, []string{"dial", "io", "timeout", "node_down"}, cause, "%v", errs)
	}
	assert.Positive(t, onVictim, "no error counted on %s: %v", victim.Addr, errs)
}
