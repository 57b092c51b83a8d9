package shardisotel_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisotel"
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
	before := goroutineIDs()
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
	require.NotEmpty(t, newShardisGoroutines(before), "the check sees the client's goroutines")
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
	waitNoLeaks(t, before, servers, name)
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

// goroutineIDs returns the stacks of the running goroutines by id.
func goroutineIDs() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		id, _, _ := strings.Cut(strings.TrimPrefix(header, "goroutine "), " ")
		out[id] = g
	}
	return out
}

// newShardisGoroutines returns the stacks of the goroutines that are not
// in before and run code of the module (the library or this package's
// instrumentation), leaving out the test's own.
func newShardisGoroutines(before map[string]string) []string {
	var out []string
	for id, g := range goroutineIDs() {
		if _, ok := before[id]; ok || strings.Contains(g, "testing.tRunner") {
			continue
		}
		if strings.Contains(g, "github.com/shardis/shardis/") && !strings.Contains(g, "internal/redistest") {
			out = append(out, g)
		}
	}
	return out
}

// clientsNamed counts the connections named name on servers.
func clientsNamed(t *testing.T, servers []*redistest.Server, name string) int {
	t.Helper()
	n := 0
	for _, s := range servers {
		list, err := s.Do("CLIENT", "LIST")
		require.NoError(t, err)
		n += strings.Count(list, "name="+name+" ")
	}
	return n
}

// waitNoLeaks waits until no goroutine started since before runs the
// module's code and no connection named name is left on servers.
func waitNoLeaks(t *testing.T, before map[string]string, servers []*redistest.Server, name string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := newShardisGoroutines(before)
		conns := clientsNamed(t, servers, name)
		if len(left) == 0 && conns == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left after Close: %d connections, %d goroutines:\n%s", conns, len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
