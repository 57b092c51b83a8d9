package shardisprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sentinelSeries gathers reg and returns the value of each
// shardis_sentinel_* series by "metric node name".
func sentinelSeries(reg *prometheus.Registry) (map[string]float64, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		name := mf.GetName()
		if len(name) < len("shardis_sentinel_") || name[:len("shardis_sentinel_")] != "shardis_sentinel_" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			k := name + " " + l["node"] + " " + l["name"]
			if m.GetCounter() != nil {
				out[k] = m.GetCounter().GetValue()
			} else {
				out[k] = m.GetGauge().GetValue()
			}
		}
	}
	return out, nil
}

// TestReview21SentinelShardFailoversExported: the failovers a client
// followed on a Sentinel shard, whether its view of the master is stale
// and how many Sentinels tell it of failovers were in shard.Stats but
// not in Prometheus, where a failover left no trace once the new
// master answered. They are exported per Sentinel shard, with the
// shard's node and name labels.
func TestReview21SentinelShardFailoversExported(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Replicas: 1, Sentinels: 1,
		DownAfter: time.Second, FailoverTimeout: 2 * time.Second})
	master, err := set.Master(0)
	require.NoError(t, err)
	plain := redistest.StartNTB(t, 1, redistest.Options{})[0]
	cfg := shard.Config{
		Pool:     pool.Options{DialTimeout: time.Second, ReadTimeout: 2 * time.Second},
		Health:   shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 2, Timeout: 300 * time.Millisecond},
		Shards:   []ring.Shard{{Name: "s0", Weight: 1}, {Name: "plain", Addr: plain.Addr, Weight: 1}},
		Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), Shards: []shard.SentinelShard{{Name: "s0", MasterName: set.Names()[0]}}},
	}
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(shardisprom.NewCollector(c, nil))
	var node string
	for _, n := range c.Nodes() {
		if n.Name == "s0" {
			node = n.Addr
		}
	}
	require.NotEmpty(t, node)
	suffix := " " + node + " s0"

	require.Eventually(t, func() bool {
		v, err := sentinelSeries(reg)
		return err == nil && v["shardis_sentinel_subscribed"+suffix] == 1
	}, 30*time.Second, 20*time.Millisecond, "the client never subscribed to the Sentinel")
	v, err := sentinelSeries(reg)
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{
		"shardis_sentinel_failovers_total" + suffix: 0,
		"shardis_sentinel_stale" + suffix:           0,
		"shardis_sentinel_subscribed" + suffix:      1,
	}, v, "one series each, for the Sentinel shard only")

	require.NoError(t, master.Kill())
	require.Eventually(t, func() bool {
		v, err := sentinelSeries(reg)
		return err == nil && v["shardis_sentinel_failovers_total"+suffix] == 1
	}, 60*time.Second, 50*time.Millisecond, "the failover was not counted")

	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
}
