package shard_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A single command costs few allocations beyond redigo's own: the client's
// routing and bookkeeping are recycled.
func TestDoAllocations(t *testing.T) {
	c, _ := startRing(t, 3)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "alloc:k", "v")
	require.NoError(t, err)
	args := []any{"alloc:k"}
	allocs := testing.AllocsPerRun(200, func() {
		c.Do(ctx, "GET", args...)
	})
	t.Logf("%.1f allocations per GET", allocs)
	// redigo itself allocates the reply ([]byte) and a few bits of its
	// pool bookkeeping; the client must add almost nothing.
	assert.LessOrEqual(t, allocs, 4.0)
}

// With a context that can be cancelled, pipelines still reuse their
// buffers when nothing was cut off.
func TestPipelineReusesBuffersWithCancellableContext(t *testing.T) {
	c, _ := startRing(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := c.Pipeline()
	run := func() {
		for i := 0; i < 100; i++ {
			p.Send("GET", "reuse:k")
		}
		res, err := p.Exec(ctx)
		require.NoError(t, err)
		require.Len(t, res, 100)
	}
	run() // sizes the buffers
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const rounds = 20
	for i := 0; i < rounds; i++ {
		run()
	}
	runtime.ReadMemStats(&after)
	perCommand := float64(after.TotalAlloc-before.TotalAlloc) / rounds / 100
	t.Logf("%.0f bytes allocated per command", perCommand)
	// The results, the queued arguments and redigo's replies: about 100
	// bytes. Fresh calls and requests for every Exec would add about 200.
	assert.Less(t, perCommand, 200.0)
}
