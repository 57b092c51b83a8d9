package shardisprom_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// durationNodes lists the nodes that have shardis_command_duration_seconds
// series. It does not fail the test, so that conditions can call it.
func durationNodes(d *shardisprom.Durations) (map[string]bool, error) {
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(d); err != nil {
		return nil, err
	}
	mfs, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, mf := range mfs {
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

func hasSeries(d *shardisprom.Durations, node string) bool {
	nodes, err := durationNodes(d)
	return err == nil && nodes[node]
}

// TestReview3DurationsForgetARingShardThatLeft: the duration series of a
// ring shard that a finished migration left behind are deleted when the
// client retires it (shard.NodeRetired), as those of a master that left
// the cluster are: without it, every scale-in kept its shards' series
// forever.
func TestReview3DurationsForgetARingShardThatLeft(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	d := shardisprom.NewDurations(nil, nil)
	ringOf := func(servers []*redistest.Server) shard.Config {
		return ringOver(servers, "shard", shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 2, Timeout: time.Second})
	}
	cfg := ringOf(servers)
	cfg.Hooks = d.Hooks()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	gone := servers[2]
	for i := 0; !hasSeries(d, gone.Addr) || !hasSeries(d, servers[0].Addr); i++ {
		require.Less(t, i, 10000, "no key on %s or %s", gone.Addr, servers[0].Addr)
		_, err := c.Do(ctx, "SET", fmt.Sprintf("r3ret:%d", i), "v")
		require.NoError(t, err)
	}

	to := ringOf(servers[:2])
	to.Migration = &shard.Migration{Armed: true}
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.FinishMigration())
	// NodeRetired comes when the client installs the topology without
	// the shard, or at its next health check.
	assert.Eventually(t, func() bool { return !hasSeries(d, gone.Addr) }, 20*time.Second, 10*time.Millisecond,
		"the series of %s are still there", gone.Addr)
	nodes, err := durationNodes(d)
	require.NoError(t, err)
	assert.True(t, nodes[servers[0].Addr], "the series of the shards that stay are kept: %v", nodes)
}
