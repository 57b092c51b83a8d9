package shardisotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// nodeCommands returns shardis.client.commands by master (read_only
// false), host:port.
func nodeCommands(t *testing.T, tel *telemetry) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	out := map[string]int64{}
	for _, p := range sumPoints(t, rm, "shardis.client.commands") {
		a := attrs(p.Attributes.ToSlice())
		if a["shardis.node.read_only"] == "false" {
			out[a["server.address"]+":"+a["server.port"]] = p.Value
		}
	}
	return out
}

// TestReview17PipelineAndFanOutCountsAddUp: 100 commands of a pipeline
// over the 3 masters, and a 100-key MGET split over them, give one child
// span per master whose db.operation.batch.size values sum to 100, and
// per-master shardis.client.commands that grow by 100 in all; every
// child names a master.
func TestReview17PipelineAndFanOutCountsAddUp(t *testing.T) {
	rc := clusterForTest(t)
	tel := newTelemetry(t, rc)
	ctx := context.Background()
	masters := map[string]bool{}
	for _, m := range rc.Masters() {
		masters[m.Addr] = true
	}
	// Warm up: the client knows the slot map and has connections.
	_, err := tel.c.Do(ctx, "GET", "r17c:warm")
	require.NoError(t, err)

	check := func(what string, run func() error) {
		t.Helper()
		before := nodeCommands(t, tel)
		tel.spans.Reset()
		require.NoError(t, run(), what)
		after := nodeCommands(t, tel)
		var delta int64
		for addr := range masters {
			delta += after[addr] - before[addr]
		}
		assert.Equal(t, int64(100), delta, "%s: commands counted per master: before %v after %v", what, before, after)
		total := 0
		parts := map[string]int{}
		for _, s := range tel.spans.Ended() {
			a := attrs(s.Attributes())
			if s.Parent().SpanID().IsValid() {
				n, err := strconv.Atoi(a["db.operation.batch.size"])
				require.NoError(t, err, "%s: %s", what, s.Name())
				node := a["server.address"] + ":" + a["server.port"]
				assert.True(t, masters[node], "%s: child span on %q", what, node)
				parts[node] += n
				total += n
			}
		}
		assert.Equal(t, 100, total, "%s: batch sizes by node %v", what, parts)
		assert.Len(t, parts, 3, "%s: %v", what, parts)
	}
	check("pipeline", func() error {
		p := tel.c.Pipeline()
		for i := range 100 {
			p.Send("SET", fmt.Sprintf("r17c:%d", i), i)
		}
		_, err := p.Exec(ctx)
		return err
	})
	check("mget", func() error {
		args := make([]any, 100)
		for i := range args {
			args[i] = fmt.Sprintf("r17c:%d", i)
		}
		_, err := tel.c.Do(ctx, "MGET", args...)
		return err
	})
}

// TestReview17TenThousandKeysKeepTheSeriesBounded: 10,000 commands on
// distinct keys give no new metric series once each node has its own,
// and no key shows in any exported attribute (spans and metrics).
func TestReview17TenThousandKeysKeepTheSeriesBounded(t *testing.T) {
	rc := clusterForTest(t)
	tel := newTelemetry(t, rc)
	ctx := context.Background()
	series := func() (int, string) {
		var rm metricdata.ResourceMetrics
		require.NoError(t, tel.reader.Collect(ctx, &rm))
		n := 0
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case metricdata.Histogram[float64]:
					n += len(d.DataPoints)
				case metricdata.Sum[int64]:
					n += len(d.DataPoints)
				case metricdata.Sum[float64]:
					n += len(d.DataPoints)
				case metricdata.Gauge[int64]:
					n += len(d.DataPoints)
				case metricdata.Gauge[float64]:
					n += len(d.DataPoints)
				default:
					t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
				}
			}
		}
		dump, err := json.Marshal(rm)
		require.NoError(t, err)
		return n, string(dump)
	}
	for i := range 300 {
		_, err := tel.c.Do(ctx, "SET", fmt.Sprintf("r17k:%d", i), "v")
		require.NoError(t, err)
	}
	// The series that do not depend on the commands are there once
	// every node entry (3 masters, 3 replicas' read-only entries) has a
	// health-check round trip and a dialed pool.
	entries := len(rc.Masters()) + len(rc.Replicas())
	waitFor(t, 20*time.Second, "a round trip and a dial per node entry", func() bool {
		var rm metricdata.ResourceMetrics
		require.NoError(t, tel.reader.Collect(ctx, &rm))
		rtt, dials := find(rm, "shardis.client.node.rtt"), find(rm, "db.client.connection.create_time")
		return rtt != nil && dials != nil &&
			len(rtt.Data.(metricdata.Gauge[float64]).DataPoints) == entries &&
			len(dials.Data.(metricdata.Histogram[float64]).DataPoints) == entries
	})
	first, _ := series()
	for i := range 10000 {
		_, err := tel.c.Do(ctx, "SET", fmt.Sprintf("r17k:%d", i), "v")
		require.NoError(t, err)
	}
	last, dump := series()
	t.Logf("series after 300 keys %d, after 10,000 %d", first, last)
	assert.Equal(t, first, last)
	assert.NotContains(t, dump, "r17k:")
	for _, s := range tel.spans.Ended() {
		if text := fmt.Sprintf("%s %v %v", s.Name(), s.Attributes(), s.Events()); strings.Contains(text, "r17k:") {
			t.Fatalf("a key in a span: %s", text)
		}
	}
}
