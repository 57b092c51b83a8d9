package shardisotel_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/shard"
	"github.com/shardis/shardis/shard/command"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// hookTelemetry is an Instrumentation with in-memory exporters whose hooks
// the test calls itself, without a client.
type hookTelemetry struct {
	h      *shard.Hooks
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newHookTelemetry(t *testing.T) *hookTelemetry {
	t.Helper()
	ht := &hookTelemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(ht.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(ht.reader))
	t.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	in, err := shardisotel.New(shardisotel.WithTracerProvider(tp), shardisotel.WithMeterProvider(mp))
	require.NoError(t, err)
	ht.h = in.Hooks()
	return ht
}

// do runs the hooks of one command named name on node, as a client does.
func (ht *hookTelemetry) do(name, node string, o shard.Outcome) {
	n := shard.Node{Name: node, Addr: node}
	op := &shard.Op{Name: name, Commands: 1, Start: time.Now()}
	ctx := ht.h.Start(context.Background(), op)
	ht.h.Command(ctx, &shard.CommandEvent{Node: n, Name: name, Outcome: o, Start: op.Start, Duration: time.Millisecond})
	op.Duration, op.Node, op.Nodes, op.Outcome, op.Attempts = time.Millisecond, n, 1, o, 1
	ht.h.Finish(ctx, op)
}

// spanNames counts the ended spans by "name db.operation.name".
func (ht *hookTelemetry) spanNames() map[string]int {
	out := map[string]int{}
	for _, s := range ht.spans.Ended() {
		out[s.Name()+" "+attrs(s.Attributes())["db.operation.name"]]++
	}
	return out
}

// durationSeries counts the duration histogram's measurements by
// "server.address:server.port db.operation.name shardis.outcome".
func durationSeries(t *testing.T, reader *sdkmetric.ManualReader) map[string]uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]uint64{}
	for _, p := range histPoints(t, rm, "db.client.operation.duration") {
		a := attrs(p.Attributes.ToSlice())
		out[a["server.address"]+":"+a["server.port"]+" "+a["db.operation.name"]+" "+a["shardis.outcome"]] += p.Count
	}
	return out
}

// db.operation.name and the span name are a name of the command table in
// upper case, a module-shaped name (shard.MaxModuleOperations), or OTHER:
// whatever names the callers make up, the series and span names stay
// bounded.
func TestOperationNameIsACommandOrOther(t *testing.T) {
	require.Nil(t, command.Lookup(shardisotel.OtherOperation), "OTHER must not be a command's name")
	const node = "10.0.0.1:6379"
	cases := []struct {
		name, want string
	}{
		{"GET", "GET"},
		{"get", "GET"},
		{"hGetAll", "HGETALL"},
		{"object|encoding", "OBJECT|ENCODING"},
		{"NOSUCHCOMMAND", shardisotel.OtherOperation},
		{"gett", shardisotel.OtherOperation},
		{"user:42:get", shardisotel.OtherOperation},
		{"GET ", shardisotel.OtherOperation},
		{"", shardisotel.OtherOperation},
		{"PIPELINE", shardisotel.OtherOperation}, // a caller's name, not a pipeline
		{"FT.SEARCH", "FT.SEARCH"},               // a module's command (shard.MaxModuleOperations)
		{strings.Repeat("get", 100), shardisotel.OtherOperation},
	}
	for _, tc := range cases {
		sub := tc.name
		if len(sub) > 20 {
			sub = sub[:20] + "..."
		}
		t.Run(sub, func(t *testing.T) {
			ht := newHookTelemetry(t)
			ht.do(tc.name, node, shard.OutcomeOK)
			assert.Equal(t, map[string]int{tc.want + " " + tc.want: 1}, ht.spanNames())
			assert.Equal(t, map[string]uint64{node + " " + tc.want + " ok": 1}, durationSeries(t, ht.reader))
		})
	}

	t.Run("pipeline", func(t *testing.T) {
		ht := newHookTelemetry(t)
		n := shard.Node{Name: node, Addr: node}
		op := &shard.Op{Name: "PIPELINE", Pipeline: true, Commands: 2, Start: time.Now()}
		ctx := ht.h.Start(context.Background(), op)
		ht.h.Pipeline(ctx, &shard.PipelineEvent{Node: n, Commands: 2, Start: op.Start, Duration: time.Millisecond})
		op.Duration, op.Node, op.Nodes = time.Millisecond, n, 1
		ht.h.Finish(ctx, op)
		assert.Equal(t, map[string]int{"PIPELINE PIPELINE": 1, "PIPELINE " + node + " PIPELINE": 1}, ht.spanNames())
		assert.Equal(t, map[string]uint64{node + " PIPELINE ok": 1}, durationSeries(t, ht.reader))
	})

	t.Run("random names", func(t *testing.T) {
		ht := newHookTelemetry(t)
		for i := range 1000 {
			ht.do(fmt.Sprintf("cmd-%d-%x", i, rand.Uint64()), node, shard.OutcomeServerError)
			ht.do("set", node, shard.OutcomeOK)
		}
		assert.Equal(t, map[string]int{"OTHER OTHER": 1000, "SET SET": 1000}, ht.spanNames())
		assert.Equal(t, map[string]uint64{
			node + " OTHER server_error": 1000,
			node + " SET ok":             1000,
		}, durationSeries(t, ht.reader))
	})
}

// Against the cluster: a name the server refuses is measured and traced as
// OTHER, and a lower-case name under its upper-case one.
func TestUnknownCommandOnServerIsOther(t *testing.T) {
	rc := clusterForTest(t)
	tel := newTelemetry(t, rc)
	ctx := context.Background()
	m := rc.Masters()[0]
	key, _ := keyOnMaster(t, rc, m, "names")
	for i := range 5 {
		_, err := tel.c.DoKey(ctx, key, fmt.Sprintf("nosuch%d", i), key)
		require.Error(t, err)
		_, err = tel.c.Do(ctx, "get", key)
		require.NoError(t, err)
	}
	names := map[string]int{}
	for _, s := range tel.spans.Ended() {
		names[s.Name()+" "+attrs(s.Attributes())["db.operation.name"]]++
	}
	assert.Equal(t, map[string]int{"OTHER OTHER": 5, "GET GET": 5}, names)
	series := durationSeries(t, tel.reader)
	assert.Equal(t, uint64(5), series[m.Addr+" GET ok"], "%v", series)
	assert.Equal(t, uint64(5), series[m.Addr+" OTHER server_error"], "%v", series)
	assert.Len(t, series, 2, "%v", series)
}
