package shardisprom_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nodesWithSeries returns the nodes that have a series of the metric
// name in reg. It does not fail the test, so that conditions can call it.
func nodesWithSeries(reg *prometheus.Registry, name string) (map[string]bool, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "node" {
					out[l.GetValue()] = true
				}
			}
		}
	}
	return out, nil
}

// TestReview21RetiredShardLosesItsErrorAndEventSeries: a ring shard that
// failed (its errors and its down event counted) and that a finished
// migration then left behind loses those series with its durations, as
// shardis_node_up does: a cluster scaled in and out over time must not
// keep every address it ever had.
func TestReview21RetiredShardLosesItsErrorAndEventSeries(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	d := shardisprom.NewDurations(nil, nil)
	ringOf := func(servers []*redistest.Server) shard.Config {
		return ringOver(servers, "shard", shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 1, Timeout: 300 * time.Millisecond})
	}
	cfg := ringOf(servers)
	cfg.Hooks = d.Hooks()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(d)

	gone := servers[2]
	kgone := keyOn(t, c, gone.Addr, "r21ret-")
	kstay := keyOn(t, c, servers[0].Addr, "r21ret-")
	require.NoError(t, gone.Kill())
	_, err = c.Do(ctx, "GET", kgone)
	require.Error(t, err)
	_, err = c.Do(ctx, "GET", kstay)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		n, err := nodeEventCounts(reg)
		return err == nil && n["down "+gone.Addr] >= 1
	}, 30*time.Second, 20*time.Millisecond, "no down event for %s", gone.Addr)
	errs, err := nodesWithSeries(reg, "shardis_command_errors_total")
	require.NoError(t, err)
	require.True(t, errs[gone.Addr], "no error series for %s: %v", gone.Addr, errs)

	to := ringOf(servers[:2])
	to.Migration = &shard.Migration{Armed: true}
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.FinishMigration())
	require.Eventually(t, func() bool {
		for _, name := range []string{"shardis_command_errors_total", "shardis_node_events_total", "shardis_command_duration_seconds"} {
			n, err := nodesWithSeries(reg, name)
			if err != nil || n[gone.Addr] {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond, "the series of %s are still there", gone.Addr)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			assert.NotContains(t, m.String(), "retired", "%s: the retirement is not a series", mf.GetName())
			assert.False(t, strings.Contains(m.String(), gone.Addr), "%s keeps %s", mf.GetName(), gone.Addr)
		}
	}
	dur, err := nodesWithSeries(reg, "shardis_command_duration_seconds")
	require.NoError(t, err)
	assert.True(t, dur[servers[0].Addr], "the shards that stay keep their series: %v", dur)
}
