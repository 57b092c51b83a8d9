package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
)

// TestReview8ClusterWriteResetIsNotRun: in cluster mode a command the
// connection failed to write whole (a value over proto-max-bulk-len, the
// server closing the connection mid-value) did not run: it is retried as
// an unsent command is, and fails, when the retries give up, as not run
// rather than of unknown outcome; the command queued after it never ran
// either, and the node, which answers every other connection, is not
// marked down.
func TestReview8ClusterWriteResetIsNotRun(t *testing.T) {
	cl := redistest.StartClusterTB(t, 3, 0, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	cfg := clusterConfig(cl.Seeds()...)
	cfg.DisableAutoPipeline = true
	cfg.Health.Interval = time.Hour // only the commands count failures
	cfg.Cluster.MaxRetryWait = 300 * time.Millisecond
	c := newClient(t, cfg)
	ctx := context.Background()
	big := strings.Repeat("x", 32<<20)

	for i := 0; i < 4; i++ {
		_, err := c.Do(ctx, "SET", "{r8wc}big", big)
		requireRefusedOrNotWritten(t, err, "oversized SET")
	}
	// The INCR queued after the SET was never written: not run, it is
	// sent again as an unsent command is, and runs once (the SET,
	// refused, is not sent again), or fails as not run.
	p := c.Pipeline()
	p.Send("SET", "{r8wc}big", big)
	p.Send("INCR", "{r8wc}after")
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 2)
	requireRefusedOrNotWritten(t, res[0].Err, "oversized SET in a pipeline")
	want := any(nil)
	if res[1].Err == nil {
		require.Equal(t, int64(1), res[1].Reply, "INCR queued after it, sent again")
		want = []byte("1")
	} else {
		requireNotWritten(t, res[1].Err, "INCR queued after it")
	}
	after, err := c.Do(ctx, "GET", "{r8wc}after")
	require.NoError(t, err)
	require.Equal(t, want, after, "the INCR after the oversized SET")
	for _, n := range c.Stats().Nodes {
		require.False(t, n.Down, "node %s marked down by write resets", n.Node.Addr)
	}
}
