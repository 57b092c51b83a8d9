package shardisotel_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestReview9APanickingHookJoinedFirstLeavesTheSpansAlone: a program's
// own hooks joined with the instrumentation's (Instrument joins them
// first) may panic; the client recovers the panic (Hooks.Panic) and goes
// on. The instrumentation's hooks must still run in pairs: when the
// program's Start panicked before the tracer's Start ran, the tracer's
// Finish took the caller's own span from the context and ended it,
// with the command's attributes; when the program's Finish panicked,
// the command's span never ended.
func TestReview9APanickingHookJoinedFirstLeavesTheSpansAlone(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	for _, which := range []string{"Start", "Finish"} {
		t.Run(which, func(t *testing.T) {
			spans := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			t.Cleanup(func() { tp.Shutdown(context.Background()) })
			var mu sync.Mutex
			var panics []string
			boom := func() { panic("the program's hook failed") }
			own := &shard.Hooks{Panic: func(err *shard.PanicError) {
				mu.Lock()
				defer mu.Unlock()
				panics = append(panics, err.Callback)
			}}
			if which == "Start" {
				own.Start = func(ctx context.Context, _ *shard.Op) context.Context { boom(); return ctx }
			} else {
				own.Finish = func(context.Context, *shard.Op) { boom() }
			}
			cfg := shard.Config{Pool: pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second}, Hooks: own}
			cfg.Health.Interval = -1
			cfg.Shards = []ring.Shard{{Name: s.Addr, Addr: s.Addr, Weight: 1}}
			_, err := shardisotel.Instrument(&cfg, shardisotel.WithTracerProvider(tp))
			require.NoError(t, err)
			c, err := shard.New(context.Background(), cfg)
			require.NoError(t, err)
			t.Cleanup(func() { c.Close() })

			ctx, parent := tp.Tracer("app").Start(context.Background(), "request")
			_, err = c.Do(ctx, "SET", "r9join", "v")
			require.NoError(t, err)
			assert.True(t, parent.IsRecording(), "the caller's span is still open")
			parent.End()

			var names []string
			for _, sp := range spans.Ended() {
				names = append(names, sp.Name())
				if sp.Name() == "request" {
					assert.NotContains(t, attrs(sp.Attributes()), "db.system.name", "the caller's span got the command's attributes")
				}
			}
			assert.ElementsMatch(t, []string{"SET", "request"}, names)
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, []string{"Hooks." + which}, panics)
		})
	}
}
