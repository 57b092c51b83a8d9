package shardisprom_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const password = "prom-Pa55word-q7"

// ringClient starts n servers with an ACL user and a client over them
// without health checks (so that nothing but the test uses the pools).
func ringClient(t *testing.T, n int, hooks *shard.Hooks) (*shard.Client, []*redistest.Server) {
	t.Helper()
	servers := redistest.StartNTB(t, n, redistest.Options{Users: []redistest.User{{Name: "app", Password: password}}})
	cfg := shard.Config{
		Pool:   pool.Options{Username: "app", Password: password, DialTimeout: time.Second, ReadTimeout: time.Second},
		Health: shard.HealthOptions{Interval: -1},
		Hooks:  hooks,
	}
	for i, s := range servers {
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: fmt.Sprintf("shard-%d", i), Addr: s.Addr, Weight: 1})
	}
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c, servers
}

// dbsize asks a server directly how many keys it holds.
func dbsize(t *testing.T, s *redistest.Server) int {
	t.Helper()
	v, err := s.Do("DBSIZE")
	require.NoError(t, err)
	var n int
	_, err = fmt.Sscan(v, &n)
	require.NoError(t, err)
	return n
}

// Every metric with its labels and values, after a workload whose
// per-node counts the servers themselves tell.
func TestCollectorListsEveryMetric(t *testing.T) {
	c, servers := ringClient(t, 3, nil)
	ctx := context.Background()
	const n = 30
	for i := range n {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("prom:%d", i), i)
		require.NoError(t, err)
	}
	col := shardisprom.NewCollector(c, prometheus.Labels{"client": "test"})

	var want strings.Builder
	section := func(name, help, typ string, line func(i int, s *redistest.Server) string) {
		fmt.Fprintf(&want, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		for i, s := range servers {
			want.WriteString(line(i, s))
		}
	}
	node := func(i int, s *redistest.Server) string {
		return fmt.Sprintf(`client="test",name="shard-%d",node=%q,read_only="false"`, i, s.Addr)
	}
	total := 0
	section("shardis_node_up", "1 while the node is usable, 0 while health checks have it marked down.", "gauge",
		func(i int, s *redistest.Server) string { return fmt.Sprintf("shardis_node_up{%s} 1\n", node(i, s)) })
	section("shardis_node_commands_total", "Commands sent (or failed fast) to the node.", "counter",
		func(i int, s *redistest.Server) string {
			k := dbsize(t, s)
			total += k
			return fmt.Sprintf("shardis_node_commands_total{%s} %d\n", node(i, s), k)
		})
	section("shardis_node_errors_total", "Connection-level failures of the node: dial, I/O, timeout, marked down.", "counter",
		func(i int, s *redistest.Server) string {
			return fmt.Sprintf("shardis_node_errors_total{%s} 0\n", node(i, s))
		})
	section("shardis_node_redirects_total", "MOVED, ASK and TRYAGAIN replies the node sent (cluster mode), by kind.", "counter",
		func(i int, s *redistest.Server) string {
			var b strings.Builder
			for _, kind := range []string{"ask", "moved", "tryagain"} {
				fmt.Fprintf(&b, "shardis_node_redirects_total{client=\"test\",kind=%q,name=\"shard-%d\",node=%q,read_only=\"false\"} 0\n", kind, i, s.Addr)
			}
			return b.String()
		})
	section("shardis_node_retries_total", "Commands sent again to the node after a redirect or a retryable failure (cluster mode, Sentinel shards).", "counter",
		func(i int, s *redistest.Server) string {
			return fmt.Sprintf("shardis_node_retries_total{%s} 0\n", node(i, s))
		})
	// One caller at a time: one connection per node, idle between commands.
	section("shardis_pool_connections", "Open connections of the node's pool, by state (idle, used).", "gauge",
		func(i int, s *redistest.Server) string {
			return fmt.Sprintf("shardis_pool_connections{client=\"test\",node=%q,state=\"idle\"} 1\nshardis_pool_connections{client=\"test\",node=%q,state=\"used\"} 0\n", s.Addr, s.Addr)
		})
	section("shardis_pool_waits_total", "Times a caller waited for a connection because the pool was at MaxActive.", "counter",
		func(i int, s *redistest.Server) string {
			return fmt.Sprintf("shardis_pool_waits_total{client=\"test\",node=%q} 0\n", s.Addr)
		})
	section("shardis_pool_wait_seconds_total", "Total time callers waited for a connection.", "counter",
		func(i int, s *redistest.Server) string {
			return fmt.Sprintf("shardis_pool_wait_seconds_total{client=\"test\",node=%q} 0\n", s.Addr)
		})
	section("shardis_pool_dials_total", "Connections dialed, successfully or not.", "counter",
		func(i int, s *redistest.Server) string {
			return fmt.Sprintf("shardis_pool_dials_total{client=\"test\",node=%q} 1\n", s.Addr)
		})
	section("shardis_pool_dial_errors_total", "Dials that failed, refused AUTH included.", "counter",
		func(i int, s *redistest.Server) string {
			return fmt.Sprintf("shardis_pool_dial_errors_total{client=\"test\",node=%q} 0\n", s.Addr)
		})
	want.WriteString("# HELP shardis_topology_refreshes_total Cluster topology refreshes.\n# TYPE shardis_topology_refreshes_total counter\nshardis_topology_refreshes_total{client=\"test\"} 0\n")
	want.WriteString("# HELP shardis_topology_other_cluster_answers_total Cluster topology answers that came from another cluster: refused, or taken by a cluster switch.\n# TYPE shardis_topology_other_cluster_answers_total counter\nshardis_topology_other_cluster_answers_total{client=\"test\"} 0\n")
	want.WriteString("# HELP shardis_topology_cluster_switches_total Refreshes that took another cluster's answer from a seed because no node of the cluster in use answered: the client follows that cluster since.\n# TYPE shardis_topology_cluster_switches_total counter\nshardis_topology_cluster_switches_total{client=\"test\"} 0\n")
	require.Equal(t, n, total, "every key on one server")

	require.NoError(t, testutil.CollectAndCompare(col, strings.NewReader(want.String())))
	// No RTT without health checks: the series is absent, not zero.
	assert.Equal(t, 0, testutil.CollectAndCount(col, "shardis_node_rtt_seconds"))
}

// A node marked down shows as 0, and its failures are counted.
func TestCollectorNodeDown(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := shard.Config{Health: shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 2, Timeout: 200 * time.Millisecond}}
	for i, s := range servers {
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: fmt.Sprintf("shard-%d", i), Addr: s.Addr, Weight: 1})
	}
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	defer c.Close()
	col := shardisprom.NewCollector(c, nil)
	require.NoError(t, servers[1].Kill())
	deadline := time.Now().Add(10 * time.Second)
	for value(t, col, "shardis_node_up", servers[1].Addr) != 0 {
		require.True(t, time.Now().Before(deadline), "node never marked down")
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, 1.0, value(t, col, "shardis_node_up", servers[0].Addr))
	assert.Positive(t, value(t, col, "shardis_node_errors_total", servers[1].Addr))
	// Health checks ran: the live node has a round trip.
	assert.Positive(t, value(t, col, "shardis_node_rtt_seconds", servers[0].Addr))
}

// value returns the value of the series of metric name for node.
func value(t *testing.T, col prometheus.Collector, name, node string) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 256)
	col.Collect(ch)
	close(ch)
	found, v := 0, 0.0
	for m := range ch {
		if !strings.Contains(m.Desc().String(), `fqName: "`+name+`"`) {
			continue
		}
		var pb dto.Metric
		require.NoError(t, m.Write(&pb))
		for _, l := range pb.GetLabel() {
			if l.GetName() == "node" && l.GetValue() == node {
				found++
				v = pb.GetGauge().GetValue() + pb.GetCounter().GetValue()
			}
		}
	}
	require.LessOrEqual(t, found, 1, "one series of %s for %s", name, node)
	return v
}

// The scraped page: every metric name follows Prometheus's rules (promtool
// check metrics when installed, client_golang's linter always), the
// histogram is labelled by node, and no password appears.
func TestScrapeFollowsNamingRules(t *testing.T) {
	durations := shardisprom.NewDurations(nil, nil)
	c, servers := ringClient(t, 2, durations.Hooks())
	ctx := context.Background()
	for i := range 20 {
		_, err := c.Do(ctx, "set", fmt.Sprintf("scrape:%d", i), i)
		require.NoError(t, err)
	}
	_, err := c.Do(ctx, "INCR", "scrape:0:not-a-number")
	require.NoError(t, err)
	_, err = c.Do(ctx, "SET", "scrape:str", "x")
	require.NoError(t, err)
	_, err = c.Do(ctx, "INCR", "scrape:str")
	require.Error(t, err)
	p := c.Pipeline()
	for i := range 10 {
		p.Send("GET", fmt.Sprintf("scrape:%d", i))
	}
	_, err = p.Exec(ctx)
	require.NoError(t, err)

	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(shardisprom.NewCollector(c, nil)))
	require.NoError(t, reg.Register(durations))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	page := string(body)

	assert.NotContains(t, page, password)
	for _, s := range servers {
		assert.Contains(t, page, fmt.Sprintf(`shardis_command_duration_seconds_count{node=%q,operation="SET",outcome="ok"}`, s.Addr))
		assert.Contains(t, page, fmt.Sprintf(`shardis_command_duration_seconds_count{node=%q,operation="PIPELINE",outcome="ok"} 1`, s.Addr))
	}
	assert.Regexp(t, `shardis_command_duration_seconds_count\{node="[^"]+",operation="INCR",outcome="server_error"\} 1`, page)

	// client_golang's linter: the rules promtool applies.
	for _, col := range []prometheus.Collector{shardisprom.NewCollector(c, nil), durations} {
		problems, err := testutil.CollectAndLint(col)
		require.NoError(t, err)
		assert.Empty(t, problems)
	}
	// Names: lower snake case under the namespace, counters end in
	// _total, durations in _seconds.
	name := regexp.MustCompile(`^# TYPE (shardis_[a-z_]+) (counter|gauge|histogram)$`)
	types := 0
	for _, line := range strings.Split(page, "\n") {
		if !strings.HasPrefix(line, "# TYPE") {
			continue
		}
		types++
		m := name.FindStringSubmatch(line)
		require.NotNil(t, m, "bad metric line %q", line)
		if m[2] == "counter" {
			assert.True(t, strings.HasSuffix(m[1], "_total"), m[1])
		} else {
			assert.False(t, strings.HasSuffix(m[1], "_total"), m[1])
		}
		if strings.Contains(m[1], "duration") || strings.Contains(m[1], "wait_") || strings.Contains(m[1], "rtt") {
			assert.Contains(t, m[1], "seconds", m[1])
		}
	}
	assert.GreaterOrEqual(t, types, 12)

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool not installed (apt-get install prometheus): the linter above applied its rules")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(page)
	out, err := cmd.CombinedOutput()
	assert.NoError(t, err, "promtool check metrics: %s", out)
	assert.Empty(t, strings.TrimSpace(string(out)), "promtool check metrics")
}
