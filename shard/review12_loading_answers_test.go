package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview12LoadingMasterIsMarkedDownUnderSPublish: a loading server
// still answers the commands flagged loading (SPUBLISH, PUBLISH, ECHO,
// INFO, TIME, ...), so such a reply is no proof that the node serves. A
// master that answers LOADING to its health check's PING must be marked
// down after FailureLimit ticks even while callers keep publishing to
// its shard channels: each SPUBLISH reply (an integer, from a master
// that serves no key) used to count as the node answering and reset the
// health checks' count, so that the master stayed up throughout. Both
// ways a command is read count: a Do's (the automatic pipeline) and a
// Pipeline's.
func TestReview12LoadingMasterIsMarkedDownUnderSPublish(t *testing.T) {
	ctx := context.Background()
	rc, m := startHealthCluster(t)
	clients := []*healthClient{
		{name: "Do", op: func(c *shard.Client, ch string) error {
			_, err := c.Do(ctx, "SPUBLISH", ch, "m")
			return err
		}},
		{name: "Pipeline", op: func(c *shard.Client, ch string) error {
			p := c.Pipeline()
			p.Send("SPUBLISH", ch, "m")
			p.Send("SPUBLISH", ch, "m")
			_, err := p.Exec(ctx)
			return err
		}},
	}
	openHealthClients(t, rc, m, 0, clients)
	key, _ := keyOnMaster(t, rc, m, "review12loadingpublish")
	fillLargeKeys(t, clients[0].c, key, 400)
	for _, cl := range clients {
		require.NoError(t, cl.op(cl.c, key), "%s: SPUBLISH reaches the master", cl.name)
	}

	// 400 keys at 20 ms: some 8 s of LOADING.
	probe, reloaded := reloadSlowly(t, m, key, 20*time.Millisecond)
	start := time.Now()
	errs := make(chan error, 4)
	stop := keepBusy(clients, func(cl *healthClient, _ int) {
		if err := cl.op(cl.c, key); err == nil {
			cl.n.Add(1)
		} else if cl.n.Load() == 0 {
			select {
			case errs <- fmt.Errorf("%s: %w", cl.name, err):
			default:
			}
		}
	})
	waitAllDown(clients, 4*time.Second)
	took := time.Since(start)
	stop()
	_, err := probe.Do("GET", key)
	require.ErrorContains(t, err, "LOADING", "the master was loading throughout")
	for _, cl := range clients {
		ev, down, ups := cl.upDown.down()
		t.Logf("%s: NodeDown %v within %v, up again %d times (%d SPUBLISH answered): %v", cl.name, down, took, ups, cl.n.Load(), ev.Err)
	}
	for _, cl := range clients {
		ev, down, ups := cl.upDown.down()
		require.True(t, down, "%s: a loading master kept busy with SPUBLISH was not marked down in %v", cl.name, took)
		require.ErrorContains(t, ev.Err, "LOADING", cl.name)
		require.Zero(t, ups, "%s: the loading master was taken for up again", cl.name)
	}
	require.NoError(t, reloaded())
	for _, cl := range clients {
		waitFor(t, 15*time.Second, cl.name+": the loaded master up again", func() bool {
			_, down, ups := cl.upDown.down()
			return down && ups > 0
		})
	}
}
