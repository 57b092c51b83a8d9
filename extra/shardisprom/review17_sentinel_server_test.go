package shardisprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview17SentinelShardNamesItsServer: a Sentinel shard's node label
// names the shard, not a server (its master changes at a failover); the
// collector says which server it is now in
// shardis_node_server_info{node, name, server}, which follows the
// failover, one series at a time. A node that is its own server has
// none.
func TestReview17SentinelShardNamesItsServer(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Replicas: 1, Sentinels: 1,
		DownAfter: time.Second, FailoverTimeout: 2 * time.Second})
	master, err := set.Master(0)
	require.NoError(t, err)
	next, err := set.Replica(0)
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
	var shardNode string
	for _, n := range c.Nodes() {
		if n.Name == "s0" {
			shardNode = n.Addr
		}
	}
	require.NotEmpty(t, shardNode)
	require.NotEqual(t, master.Addr, shardNode, "a Sentinel shard's node is not a server address")

	servers := func() map[string]string {
		t.Helper()
		mfs, err := reg.Gather()
		require.NoError(t, err)
		out := map[string]string{}
		for _, mf := range mfs {
			if mf.GetName() != "shardis_node_server_info" {
				continue
			}
			for _, m := range mf.GetMetric() {
				l := map[string]string{}
				for _, lp := range m.GetLabel() {
					l[lp.GetName()] = lp.GetValue()
				}
				assert.Equal(t, 1.0, m.GetGauge().GetValue())
				assert.Equal(t, "s0", l["name"], "%v", l)
				_, dup := out[l["node"]]
				assert.False(t, dup, "one series per node: %v", l)
				out[l["node"]] = l["server"]
			}
		}
		return out
	}
	assert.Equal(t, map[string]string{shardNode: master.Addr}, servers())

	require.NoError(t, master.Kill())
	require.Eventually(t, func() bool {
		s := servers()
		return len(s) == 1 && s[shardNode] == next.Addr
	}, 60*time.Second, 50*time.Millisecond, "the info follows the failover to %s", next.Addr)
}
