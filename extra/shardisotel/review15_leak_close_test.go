package shardisotel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/internal/leaktest"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestReview15InstrumentedClientLeavesNothingAfterClose: an instrumented
// client (spans, metrics, Observe registered) with a live subscription and
// a blocking command in flight leaves no goroutine and no connection
// behind once closed, and a metrics collection after Close still works.
func TestReview15InstrumentedClientLeavesNothingAfterClose(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	const name = "leak15-otel"
	cfg := shard.Config{
		Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second, ClientName: name},
		Health: shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 3, Timeout: time.Second},
	}
	for i, s := range servers {
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: fmt.Sprintf("s-%d", i), Addr: s.Addr, Weight: 1})
	}
	spans, reader := tracetest.NewSpanRecorder(), sdkmetric.NewManualReader()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	})
	before := leaktest.Snapshot()
	ctx := context.Background()
	in, err := shardisotel.Instrument(&cfg, shardisotel.WithTracerProvider(tp), shardisotel.WithMeterProvider(mp))
	require.NoError(t, err)
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	reg, err := in.Observe(c)
	require.NoError(t, err)
	for i := 0; i < 50; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("k%d", i), i)
		require.NoError(t, err)
	}
	_, err = c.Do(ctx, "MGET", "k1", "k2", "k3")
	require.NoError(t, err)
	_, err = c.Subscribe(ctx, "ch")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "BLPOP", "nothing", 0)
		done <- err
	}()
	waitFor(t, 10*time.Second, "BLPOP in flight", func() bool {
		for _, s := range servers {
			if list, err := s.Do("CLIENT", "LIST"); err == nil && strings.Contains(list, "cmd=blpop") {
				return true
			}
		}
		return false
	})
	require.NotEmpty(t, leaktest.NewGoroutines(before), "the check sees the client's goroutines")
	require.NoError(t, c.Close())
	select {
	case err := <-done:
		assert.True(t, errors.Is(err, shard.ErrClosed), "BLPOP cut by Close: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("BLPOP did not return after Close")
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm), "a collection after Close")
	require.NoError(t, reg.Unregister())
	leaktest.WaitTB(t, before, servers, name)
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
