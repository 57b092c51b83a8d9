package shard_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// A pipeline of thousands of commands on a machine with four or more
// cores decodes each node's replies on a goroutine of its own; every
// reply still comes back in the order of the commands, with a
// cancellable context and without one.
func TestLargePipelineDecodedInParallelKeepsOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	c, _ := startRing(t, 3)
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ctx := range []context.Context{context.Background(), cctx} {
		const n = 5000
		p := c.Pipeline()
		for i := 0; i < n; i++ {
			p.Send("SET", fmt.Sprintf("large:%d", i), i)
		}
		res, err := p.Exec(ctx)
		require.NoError(t, err)
		require.Len(t, res, n)
		for i := 0; i < n; i++ {
			p.Send("GET", fmt.Sprintf("large:%d", i))
		}
		res, err = p.Exec(ctx)
		require.NoError(t, err)
		require.Len(t, res, n)
		for i, r := range res {
			require.NoError(t, r.Err)
			require.Equal(t, fmt.Sprint(i), string(r.Reply.([]byte)), "reply %d", i)
		}
	}
}
