package shardisotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// The ACL user every test client logs in with; its password must never
// show up in what is exported.
const (
	user     = "app"
	password = "otel-Pa55word-x9"
)

// shared is a 3 masters + 3 replicas cluster shared by the tests of the
// package, with an ACL user that has a password.
var shared = &redistest.SharedCluster{Masters: 3, ReplicasPerMaster: 1,
	Options: redistest.Options{Users: []redistest.User{{Name: user, Password: password}}}}

// clusterForTest returns the shared cluster, started on first use.
func clusterForTest(t *testing.T) *redistest.Cluster {
	t.Helper()
	return shared.ForTest(t)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := shared.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop the shared cluster:", err)
		code = 1
	}
	os.Exit(code)
}

// telemetry is an instrumented client with in-memory exporters.
type telemetry struct {
	c      *shard.Client
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newTelemetry(t *testing.T, rc *redistest.Cluster, opts ...shardisotel.Option) *telemetry {
	t.Helper()
	return instrumented(t, shard.Config{
		Mode:   shard.ModeCluster,
		Seeds:  rc.Seeds(),
		Pool:   pool.Options{Username: user, Password: password, DialTimeout: time.Second, ReadTimeout: 2 * time.Second},
		Health: shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 2, Timeout: 300 * time.Millisecond},
	}, opts...)
}

// instrumented creates a client on cfg, instrumented (spans and metrics,
// Observe registered) with in-memory exporters and opts.
func instrumented(t *testing.T, cfg shard.Config, opts ...shardisotel.Option) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	in, err := shardisotel.Instrument(&cfg, append([]shardisotel.Option{shardisotel.WithTracerProvider(tp), shardisotel.WithMeterProvider(mp)}, opts...)...)
	require.NoError(t, err)
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	reg, err := in.Observe(c)
	require.NoError(t, err)
	t.Cleanup(func() { reg.Unregister() })
	tel.c = c
	return tel
}

// givingUpConfig is the config of a cluster client of rc that runs no
// health checks and retries a command for at most 300ms: a command that
// cannot succeed ends in shard.ErrRetryBudget after a few attempts, each
// of which a span shows.
func givingUpConfig(rc *redistest.Cluster, po pool.Options) shard.Config {
	return shard.Config{
		Mode:    shard.ModeCluster,
		Seeds:   rc.Seeds(),
		Pool:    po,
		Health:  shard.HealthOptions{Interval: -1},
		Cluster: shard.ClusterOptions{MaxRetryWait: 300 * time.Millisecond},
	}
}

// keyOnMaster returns a key whose slot master m serves, and the slot
// (redistest.Cluster.KeyOn).
func keyOnMaster(t *testing.T, rc *redistest.Cluster, m *redistest.Server, prefix string) (string, int) {
	t.Helper()
	k, slot, err := rc.KeyOn(m, prefix)
	require.NoError(t, err)
	return k, slot
}

func attrs(kvs []attribute.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

func hostPort(t *testing.T, addr string) (string, string) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	return h, p
}

// One span per command, with the address and port of the master that
// serves the key, as the cluster itself says.
func TestSpanPerCommandNamesTheNode(t *testing.T) {
	rc := clusterForTest(t)
	tel := newTelemetry(t, rc)
	ctx := context.Background()
	masters := rc.Masters()
	require.Len(t, masters, 3)
	for i, m := range masters {
		key, _ := keyOnMaster(t, rc, m, fmt.Sprintf("span%d-", i))
		tel.spans.Reset()
		_, err := tel.c.Do(ctx, "set", key, "v")
		require.NoError(t, err)
		ended := tel.spans.Ended()
		require.Len(t, ended, 1)
		s := ended[0]
		assert.Equal(t, "SET", s.Name())
		a := attrs(s.Attributes())
		host, port := hostPort(t, m.Addr)
		assert.Equal(t, host, a["server.address"], key)
		assert.Equal(t, port, a["server.port"], key)
		assert.Equal(t, "redis", a["db.system.name"])
		assert.Equal(t, "SET", a["db.operation.name"])
		assert.NotContains(t, a, "db.query.text", "statements are off by default")
		assert.Equal(t, "Unset", s.Status().Code.String())
	}

	// A server error sets the span's status and error.type.
	tel.spans.Reset()
	key, _ := keyOnMaster(t, rc, masters[0], "spanerr")
	_, err := tel.c.Do(ctx, "SET", key, "x")
	require.NoError(t, err)
	_, err = tel.c.Do(ctx, "INCR", key)
	require.Error(t, err)
	ended := tel.spans.Ended()
	require.Len(t, ended, 2)
	a := attrs(ended[1].Attributes())
	assert.Equal(t, "ERR", a["error.type"])
	assert.Equal(t, "ERR", a["db.response.status_code"])
	assert.Equal(t, "Error", ended[1].Status().Code.String())

	// A pipeline: one span, and one child span per node with its address.
	tel.spans.Reset()
	p := tel.c.Pipeline()
	for i := range 30 {
		p.Send("SET", fmt.Sprintf("pipe:%d", i), i)
	}
	_, err = p.Exec(ctx)
	require.NoError(t, err)
	ended = tel.spans.Ended()
	require.Len(t, ended, 4)
	parent := ended[len(ended)-1]
	assert.Equal(t, "PIPELINE", parent.Name())
	assert.Equal(t, "30", attrs(parent.Attributes())["db.operation.batch.size"])
	seen := map[string]bool{}
	total := 0
	for _, child := range ended[:3] {
		assert.Equal(t, parent.SpanContext().SpanID(), child.Parent().SpanID())
		ca := attrs(child.Attributes())
		seen[ca["server.address"]+":"+ca["server.port"]] = true
		n, err := strconv.Atoi(ca["db.operation.batch.size"])
		require.NoError(t, err)
		total += n
	}
	assert.Equal(t, 30, total)
	for _, m := range masters {
		assert.True(t, seen[m.Addr], "a part for %s", m.Addr)
	}
}

// Statements, when asked for, are bounded and hide passwords.
func TestStatementsAreBounded(t *testing.T) {
	rc := clusterForTest(t)
	tel := newTelemetry(t, rc, shardisotel.WithStatements(40))
	ctx := context.Background()
	_, err := tel.c.Do(ctx, "SET", "stmt:k", strings.Repeat("v", 1000))
	require.NoError(t, err)
	_, err = tel.c.DoKey(ctx, "stmt:k", "AUTH", user, password)
	require.NoError(t, err)
	ended := tel.spans.Ended()
	require.Len(t, ended, 2)
	q := attrs(ended[0].Attributes())["db.query.text"]
	assert.Len(t, q, 40)
	assert.True(t, strings.HasPrefix(q, "SET stmt:k vvv"), q)
	assert.Equal(t, "AUTH ? ?", attrs(ended[1].Attributes())["db.query.text"])
}

// Moving a slot live: while it migrates, a key already moved is reached
// with ASK; once the slot is assigned, with MOVED. Each redirect is a span
// event that names both nodes.
func TestRedirectDuringLiveSlotMoveIsASpanEvent(t *testing.T) {
	rc := clusterForTest(t)
	tel := newTelemetry(t, rc)
	ctx := context.Background()
	masters := rc.Masters()
	from, to := masters[0], masters[1]
	// A slot that holds no other test's key, so that it can be moved.
	key, slot := emptySlotKey(t, rc, from, "live")
	_, err := tel.c.Do(ctx, "SET", key, "v")
	require.NoError(t, err)
	fromID, toID := nodeID(t, from), nodeID(t, to)
	s := strconv.Itoa(slot)
	do := func(srv *redistest.Server, args ...string) {
		t.Helper()
		_, err := srv.Do(args...)
		require.NoError(t, err, "%v on %s", args, srv.Addr)
	}
	do(to, "CLUSTER", "SETSLOT", s, "IMPORTING", fromID)
	do(from, "CLUSTER", "SETSLOT", s, "MIGRATING", toID)
	restored := false
	defer func() {
		if !restored { // put the slot back for the other tests
			for _, srv := range []*redistest.Server{from, to} {
				srv.Do("CLUSTER", "SETSLOT", s, "STABLE")
			}
		}
	}()
	host, port := hostPort(t, to.Addr)
	do(from, "MIGRATE", host, port, "", "0", "5000", "AUTH2", user, password, "KEYS", key)

	redirectEvent := func(kind string) map[string]string {
		t.Helper()
		tel.spans.Reset()
		v, err := tel.c.Do(ctx, "GET", key)
		require.NoError(t, err)
		assert.Equal(t, []byte("v"), v)
		ended := tel.spans.Ended()
		require.Len(t, ended, 1)
		span := ended[0]
		var found map[string]string
		for _, ev := range span.Events() {
			if ev.Name == "redirect" {
				found = attrs(ev.Attributes)
			}
		}
		require.NotNil(t, found, "a redirect event on the span")
		assert.Equal(t, kind, found["shardis.redirect.kind"])
		assert.Equal(t, from.Addr, found["shardis.redirect.from"])
		assert.Equal(t, to.Addr, found["shardis.redirect.to"])
		assert.Equal(t, s, found["shardis.redirect.slot"])
		// The span names the node that answered.
		a := attrs(span.Attributes())
		assert.Equal(t, host+":"+port, a["server.address"]+":"+a["server.port"])
		return found
	}
	redirectEvent("ASK")

	do(to, "CLUSTER", "SETSLOT", s, "NODE", toID)
	do(from, "CLUSTER", "SETSLOT", s, "NODE", toID)
	redirectEvent("MOVED")

	// Move it back.
	do(from, "CLUSTER", "SETSLOT", s, "IMPORTING", toID)
	do(to, "CLUSTER", "SETSLOT", s, "MIGRATING", fromID)
	fh, fp := hostPort(t, from.Addr)
	do(to, "MIGRATE", fh, fp, "", "0", "5000", "AUTH2", user, password, "KEYS", key)
	do(from, "CLUSTER", "SETSLOT", s, "NODE", fromID)
	do(to, "CLUSTER", "SETSLOT", s, "NODE", fromID)
	restored = true

	// The redirects were counted for the node that sent them.
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(ctx, &rm))
	kinds := map[string]int64{}
	for _, p := range sumPoints(t, rm, "shardis.client.redirects") {
		a := attrs(p.Attributes.ToSlice())
		assert.Equal(t, from.Addr, a["server.address"]+":"+a["server.port"])
		kinds[a["shardis.redirect.kind"]] += p.Value
	}
	assert.Equal(t, int64(1), kinds["ASK"])
	assert.Equal(t, int64(1), kinds["MOVED"])
}

func nodeID(t *testing.T, s *redistest.Server) string {
	t.Helper()
	id, err := s.Do("CLUSTER", "MYID")
	require.NoError(t, err)
	return strings.TrimSpace(id)
}

func find(rm metricdata.ResourceMetrics, name string) *metricdata.Metrics {
	for _, sm := range rm.ScopeMetrics {
		for i := range sm.Metrics {
			if sm.Metrics[i].Name == name {
				return &sm.Metrics[i]
			}
		}
	}
	return nil
}

func histPoints(t *testing.T, rm metricdata.ResourceMetrics, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	m := find(rm, name)
	require.NotNil(t, m, "metric %s", name)
	h, ok := m.Data.(metricdata.Histogram[float64])
	require.True(t, ok, "%s: unexpected data %T", name, m.Data)
	return h.DataPoints
}

func sumPoints(t *testing.T, rm metricdata.ResourceMetrics, name string) []metricdata.DataPoint[int64] {
	t.Helper()
	m := find(rm, name)
	require.NotNil(t, m, "metric %s", name)
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		return d.DataPoints
	case metricdata.Gauge[int64]:
		return d.DataPoints
	}
	t.Fatalf("%s: unexpected data %T", name, m.Data)
	return nil
}

// Every node has its own series, and no password is exported anywhere.
func TestMetricsOneSeriesPerNodeAndNoPassword(t *testing.T) {
	rc := clusterForTest(t)
	tel := newTelemetry(t, rc, shardisotel.WithStatements(0))
	ctx := context.Background()
	masters := rc.Masters()
	for i, m := range masters {
		for j := range 5 {
			key, _ := keyOnMaster(t, rc, m, fmt.Sprintf("series%d-%d-", i, j))
			_, err := tel.c.Do(ctx, "SET", key, "v")
			require.NoError(t, err)
			_, err = tel.c.Do(ctx, "GET", key)
			require.NoError(t, err)
		}
	}
	_, err := tel.c.DoKey(ctx, "series", "AUTH", user, password)
	require.NoError(t, err)
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(ctx, &rm))

	// The duration histogram: one series per node and command, and the
	// three masters all present.
	series := map[string]uint64{}
	for _, p := range histPoints(t, rm, "db.client.operation.duration") {
		a := attrs(p.Attributes.ToSlice())
		k := a["server.address"] + ":" + a["server.port"] + " " + a["db.operation.name"] + " " + a["shardis.outcome"]
		_, dup := series[k]
		assert.False(t, dup, "duplicate series %s", k)
		series[k] = p.Count
		assert.Equal(t, "redis", a["db.system.name"])
	}
	for _, m := range masters {
		assert.Equal(t, uint64(5), series[m.Addr+" SET ok"], "%s: %v", m.Addr, series)
		assert.Equal(t, uint64(5), series[m.Addr+" GET ok"], "%s: %v", m.Addr, series)
	}

	// Node state: one series per node entry (the masters, and the
	// replicas' read-only entries), all up.
	ups := map[string]int64{}
	for _, p := range sumPoints(t, rm, "shardis.client.node.up") {
		a := attrs(p.Attributes.ToSlice())
		k := a["server.address"] + ":" + a["server.port"] + " ro=" + a["shardis.node.read_only"]
		_, dup := ups[k]
		assert.False(t, dup, "duplicate series %s", k)
		ups[k] = p.Value
	}
	for _, m := range masters {
		assert.Equal(t, int64(1), ups[m.Addr+" ro=false"], "%v", ups)
	}
	for _, r := range rc.Replicas() {
		assert.Equal(t, int64(1), ups[r.Addr+" ro=true"], "%v", ups)
	}
	// Connections per pool, by state.
	conns := map[string]bool{}
	for _, p := range sumPoints(t, rm, "db.client.connection.count") {
		a := attrs(p.Attributes.ToSlice())
		k := a["db.client.connection.pool.name"] + " " + a["db.client.connection.state"]
		assert.False(t, conns[k], "duplicate series %s", k)
		conns[k] = true
	}
	for _, m := range masters {
		assert.True(t, conns[m.Addr+" idle"], "%v", conns)
		assert.True(t, conns[m.Addr+" used"], "%v", conns)
	}
	// Dials were measured per pool.
	require.NotNil(t, find(rm, "db.client.connection.create_time"))

	// No password anywhere in the exported metrics or spans.
	dump, err := json.Marshal(rm)
	require.NoError(t, err)
	var spans []string
	for _, s := range tel.spans.Ended() {
		spans = append(spans, fmt.Sprintf("%s %v %v %v", s.Name(), s.Attributes(), s.Events(), s.Status()))
	}
	text := string(dump) + strings.Join(spans, "\n")
	assert.Contains(t, text, "AUTH ? ?", "the AUTH statement was exported, hidden")
	assert.NotContains(t, text, password)
	assert.NotContains(t, text, "Pa55word")
}

// With the API's no-op providers the client gets no hooks at all: it
// costs what an uninstrumented client costs.
func TestNoopProvidersAddNoHooks(t *testing.T) {
	cases := []struct {
		name             string
		opts             []shardisotel.Option
		wantNil          bool
		wantStart, wantM bool
	}{
		{"both no-op", []shardisotel.Option{shardisotel.WithTracerProvider(tracenoop.NewTracerProvider()), shardisotel.WithMeterProvider(metricnoop.NewMeterProvider())}, true, false, false},
		{"traces only", []shardisotel.Option{shardisotel.WithTracerProvider(sdktrace.NewTracerProvider()), shardisotel.WithMeterProvider(metricnoop.NewMeterProvider())}, false, true, false},
		{"metrics only", []shardisotel.Option{shardisotel.WithTracerProvider(tracenoop.NewTracerProvider()), shardisotel.WithMeterProvider(sdkmetric.NewMeterProvider())}, false, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := shardisotel.New(tc.opts...)
			require.NoError(t, err)
			h := in.Hooks()
			if tc.wantNil {
				assert.Nil(t, h)
				return
			}
			require.NotNil(t, h)
			assert.Equal(t, tc.wantStart, h.Start != nil)
			assert.NotNil(t, h.Command)
			assert.Equal(t, tc.wantM, h.Dial != nil)
		})
	}
}
