package shardisprom_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview15CollectedClientLeavesNothingAfterClose: a client with a
// registered collector and a live subscription leaves no goroutine and no
// connection behind once closed, and a gathering after Close still works.
func TestReview15CollectedClientLeavesNothingAfterClose(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	const name = "leak15-prom"
	cfg := ringOver(servers, "s", shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 3, Timeout: time.Second})
	cfg.Pool.ClientName = name
	before := goroutineIDs()
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(shardisprom.NewCollector(c, prometheus.Labels{"client": "leak"})))
	for i := 0; i < 50; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("k%d", i), i)
		require.NoError(t, err)
	}
	_, err = c.PSubscribe(ctx, "ch:*")
	require.NoError(t, err)
	_, err = reg.Gather()
	require.NoError(t, err)
	require.NotEmpty(t, newShardisGoroutines(before), "the check sees the client's goroutines")
	require.NoError(t, c.Close())
	_, err = reg.Gather()
	require.NoError(t, err, "a gathering after Close")
	waitNoLeaks(t, before, servers, name)
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
