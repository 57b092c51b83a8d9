package shardisprom_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// upByNode gathers shardis_node_up by node address.
func upByNode(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, s := range nodeUpSeries(t, reg) {
		if node, ok := s.labels["node"]; ok {
			out[node] = s.value
		}
	}
	return out
}

// A ring shard that a finished migration left behind, then stopped, has
// no shardis_node_up series: an alert on node_up == 0 does not fire (or
// clears) after a planned scale-in.
func TestNodeUpForgetsAShardThatLeft(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	var checks atomic.Int64 // health checks of the first shard
	check := func(ctx context.Context, conn redis.Conn, n shard.Node) error {
		if n.Addr == servers[0].Addr {
			checks.Add(1)
		}
		return shard.CheckPing(ctx, conn, n)
	}
	ringOf := func(servers []*redistest.Server) shard.Config {
		return ringOver(servers, "shard", shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 2, Timeout: time.Second, Check: check})
	}
	c, err := shard.New(ctx, ringOf(servers))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(shardisprom.NewCollector(c, nil))
	gone := servers[2]
	assert.Equal(t, map[string]float64{servers[0].Addr: 1, servers[1].Addr: 1, gone.Addr: 1}, upByNode(t, reg))

	to := ringOf(servers[:2])
	to.Migration = &shard.Migration{Armed: true}
	require.NoError(t, c.StartMigration(ctx, to))
	assert.Contains(t, upByNode(t, reg), gone.Addr, "listed while the migration moves keys from it")
	require.NoError(t, c.FinishMigration())
	require.NoError(t, gone.Kill())
	// Enough health ticks for FailureLimit failed checks, had it still
	// been checked.
	n := checks.Load()
	require.Eventually(t, func() bool { return checks.Load() >= n+6 }, 20*time.Second, 10*time.Millisecond)
	assert.Equal(t, map[string]float64{servers[0].Addr: 1, servers[1].Addr: 1}, upByNode(t, reg))
}
