package shardisotel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Each SCAN page a Scanner sends is a span of its own, a child of the
// caller's, naming the node it went to, as redisotel makes a span of each
// SCAN call: the failed attempt of a page is an event of that page's
// span, not of the caller's (a request's span does not collect events of
// commands it never sent itself).
func TestReview15ScanPageHasItsOwnSpan(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	tel := ringTelemetry(t, servers)
	ctx := context.Background()
	for i := range 20 {
		_, err := tel.c.Do(ctx, "SET", fmt.Sprintf("scanspan:%d", i), "v")
		require.NoError(t, err)
	}
	down := servers[1]
	require.NoError(t, down.Kill())

	callerSpans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(callerSpans))
	defer tp.Shutdown(ctx)
	ctx, caller := tp.Tracer("caller").Start(ctx, "request")
	tel.spans.Reset()
	s := tel.c.Scan(shard.ScanOptions{Match: "scanspan:*"})
	for s.Next(ctx) {
	}
	require.Error(t, s.Err(), "a node of the ring is down")
	caller.End()

	ended := callerSpans.Ended()
	require.Len(t, ended, 1)
	assert.Empty(t, ended[0].Events(), "the caller's span holds no event of the pages")

	failedOn := map[string]int{}
	pages := 0
	for _, sp := range tel.spans.Ended() {
		if sp.Name() != "SCAN" {
			continue
		}
		pages++
		assert.Equal(t, caller.SpanContext().SpanID(), sp.Parent().SpanID(), "a page's span is a child of the caller's")
		a := attrs(sp.Attributes())
		assert.Equal(t, "SCAN", a["db.operation.name"])
		for _, ev := range sp.Events() {
			if ev.Name == "attempt failed" {
				failedOn[a["server.address"]+":"+a["server.port"]]++
			}
		}
	}
	assert.GreaterOrEqual(t, pages, 1, "a span per SCAN page")
	assert.NotZero(t, failedOn[down.Addr], "the failed page's span holds its attempt: %v", failedOn)
}
