package shardisprom_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview17SeriesBoundedThroughKeysFailoverAndReshard: against a
// password-protected cluster, 10,000 distinct keys, a slot moved to
// another master and a master killed and replaced by its replica leave a
// bounded number of series: every node label is a server's host:port,
// every operation a command's name, no key and no password in the
// exposition; and a pipeline of 100 commands over the 3 masters adds 100
// to their shardis_node_commands_total and one PIPELINE observation per
// master.
func TestReview17SeriesBoundedThroughKeysFailoverAndReshard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and kills a master")
	}
	const (
		user   = "app17"
		secret = "prom17-Pa55-w0rd"
	)
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second, Users: []redistest.User{{Name: user, Password: secret}}})
	servers := map[string]bool{}
	for _, s := range append(rc.Masters(), rc.Replicas()...) {
		servers[s.Addr] = true
	}
	d := shardisprom.NewDurations(nil, nil)
	cfg := shard.Config{
		Mode:   shard.ModeCluster,
		Seeds:  rc.Seeds(),
		Pool:   pool.Options{Username: user, Password: secret, DialTimeout: time.Second, ReadTimeout: time.Second},
		Health: shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 2, Timeout: 300 * time.Millisecond},
		Hooks:  d.Hooks(),
	}
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(shardisprom.NewCollector(c, nil), d)

	scrape := func() string {
		t.Helper()
		rec := httptest.NewRecorder()
		promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).
			ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		require.Equal(t, http.StatusOK, rec.Code)
		return rec.Body.String()
	}
	// series counts the series and checks their labels.
	series := func(what string) int {
		t.Helper()
		mfs, err := reg.Gather()
		require.NoError(t, err, what)
		n := 0
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				n++
				for _, l := range m.GetLabel() {
					switch l.GetName() {
					case "node":
						assert.True(t, servers[l.GetValue()], "%s: %s node %q", what, mf.GetName(), l.GetValue())
					case "operation":
						assert.Contains(t, []string{"SET", "GET", "PIPELINE"}, l.GetValue(), "%s: %s", what, mf.GetName())
					}
				}
			}
		}
		text := scrape()
		assert.NotContains(t, text, "r17p:", what)
		assert.NotContains(t, text, secret, what)
		assert.NotContains(t, text, "Pa55", what)
		return n
	}
	// byLabels calls f with the labels of each series of the metric
	// named name.
	byLabels := func(name string, f func(l map[string]string, m *dto.Metric)) {
		t.Helper()
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.GetMetric() {
				l := map[string]string{}
				for _, lp := range m.GetLabel() {
					l[lp.GetName()] = lp.GetValue()
				}
				f(l, m)
			}
		}
	}
	commands := func() map[string]float64 {
		out := map[string]float64{}
		byLabels("shardis_node_commands_total", func(l map[string]string, m *dto.Metric) {
			if l["read_only"] == "false" {
				out[l["node"]] = m.GetCounter().GetValue()
			}
		})
		return out
	}
	pipelines := func() map[string]uint64 {
		out := map[string]uint64{}
		byLabels("shardis_command_duration_seconds", func(l map[string]string, m *dto.Metric) {
			if l["operation"] == "PIPELINE" {
				out[l["node"]] += m.GetHistogram().GetSampleCount()
			}
		})
		return out
	}

	for i := range 100 {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("r17p:%d", i), "v")
		require.NoError(t, err)
	}
	// A pipeline of 100 commands over the 3 masters.
	before := commands()
	p := c.Pipeline()
	for i := range 100 {
		p.Send("GET", fmt.Sprintf("r17p:%d", i))
	}
	_, err = p.Exec(ctx)
	require.NoError(t, err)
	after := commands()
	var delta float64
	for _, m := range rc.Masters() {
		delta += after[m.Addr] - before[m.Addr]
	}
	assert.Equal(t, float64(100), delta, "before %v after %v", before, after)
	parts := pipelines()
	require.Len(t, parts, 3, "%v", parts)
	for _, m := range rc.Masters() {
		assert.Equal(t, uint64(1), parts[m.Addr], "%v", parts)
	}

	for i := range 10000 {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("r17p:%d", i), "v")
		require.NoError(t, err)
	}
	afterKeys := series("10,000 keys")

	// A slot moved to another master, with its keys, while the client
	// goes on: it meets ASK and MOVED.
	key := "r17p:7"
	slotOwner, err := rc.MasterOfSlot(cluster.Slot(key))
	require.NoError(t, err)
	target, err := rc.OtherMaster(slotOwner)
	require.NoError(t, err)
	_, err = redistest.MoveSlot(ctx, cluster.Slot(key), slotOwner, target, rc.Masters(), redistest.SlotMoveOptions{Batch: 1})
	require.NoError(t, err)
	for i := range 1000 {
		_, err := c.Do(ctx, "GET", fmt.Sprintf("r17p:%d", i))
		require.NoError(t, err)
	}
	afterMove := series("slot moved")

	// A master killed, its replica promoted.
	victim := rc.Masters()[0]
	replica, err := rc.ReplicaOf(victim)
	require.NoError(t, err)
	require.NoError(t, victim.Kill())
	require.Eventually(t, func() bool { // the replica serves the victim's slots
		ok := true
		for i := range 100 {
			if _, err := c.Do(ctx, "SET", fmt.Sprintf("r17p:%d", i), "v"); err != nil {
				ok = false
			}
		}
		return ok
	}, 60*time.Second, 20*time.Millisecond, "the replica serves the victim's slots")
	for i := range 10000 {
		c.Do(ctx, "GET", fmt.Sprintf("r17p:%d", i)) //nolint:errcheck // only the series matter
	}
	afterFailover := series("failover")
	t.Logf("series: after 10,000 keys %d, after the slot move %d, after the failover %d (replica %s)", afterKeys, afterMove, afterFailover, replica.Addr)
	// Per node entry (6 servers, each as master or replica entry, at
	// most 2 entries each): node_up, commands, errors, 3 redirect kinds,
	// retries, rtt; per pool 6; 3 topology counters; durations at most
	// 3 operations × 8 outcomes per node.
	bound := 6*2*8 + 6*6 + 3 + 6*3*8
	assert.LessOrEqual(t, afterFailover, bound)
}
