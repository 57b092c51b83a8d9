package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview11ClusterLoadingMasterIsMarkedDownUnderTraffic: a master that
// answers LOADING cannot serve, and its health check's PING fails with
// the same reply, which marks it down after FailureLimit ticks when it is
// idle. Commands kept busy on it (callers retrying their reads) must not
// count its LOADING replies as the node answering: they used to reset
// the health checks' count on every reply, so that a loading master
// under traffic was never marked down, and every topology refresh kept
// asking it first, waiting the hedge delay for it. Both ways a command
// is read count: a Do's (the automatic pipeline) and a Pipeline's.
func TestReview11ClusterLoadingMasterIsMarkedDownUnderTraffic(t *testing.T) {
	ctx := context.Background()
	rc, m := startHealthCluster(t)
	clients := []*healthClient{
		{name: "Do", op: func(c *shard.Client, key string) error {
			_, err := c.Do(ctx, "GET", key)
			return err
		}},
		{name: "Pipeline", op: func(c *shard.Client, key string) error {
			p := c.Pipeline()
			p.Send("GET", key)
			p.Send("GET", key)
			_, err := p.Exec(ctx)
			return err
		}},
	}
	openHealthClients(t, rc, m, 200*time.Millisecond, clients)
	key, _ := keyOnMaster(t, rc, m, "review11loadinghealth")
	fillLargeKeys(t, clients[0].c, key, 300)

	// 300 keys at 20 ms: some 6 s of LOADING.
	probe, reloaded := reloadSlowly(t, m, key, 20*time.Millisecond)
	start := time.Now()
	stop := keepBusy(clients, func(cl *healthClient, g int) {
		_ = cl.op(cl.c, fmt.Sprintf("%s:%d", key, g))
		cl.n.Add(1)
	})
	waitAllDown(clients, 3*time.Second)
	took := time.Since(start)
	// Traffic goes on for a while longer: the master stays down.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	_, err := probe.Do("GET", key)
	require.ErrorContains(t, err, "LOADING", "the master was loading throughout")
	for _, cl := range clients {
		ev, down, ups := cl.upDown.down()
		t.Logf("%s: NodeDown %v within %v, up again %d times (%d reads): %v", cl.name, down, took, ups, cl.n.Load(), ev.Err)
	}
	for _, cl := range clients {
		ev, down, ups := cl.upDown.down()
		require.Positive(t, cl.n.Load(), "%s: no read was sent", cl.name)
		require.True(t, down, "%s: a master answering LOADING to every read was not marked down in %v", cl.name, took)
		require.ErrorContains(t, ev.Err, "LOADING", cl.name)
		require.Zero(t, ups, "%s: the loading master was taken for up again", cl.name)
	}

	// A refresh now asks the other masters first: it no longer waits
	// for the loading one (askTopology's 100 ms hedge delay) each time.
	var fastest time.Duration
	for k := range 3 {
		s := time.Now()
		require.NoError(t, clients[0].c.Refresh(ctx))
		if d := time.Since(s); k == 0 || d < fastest {
			fastest = d
		}
	}
	_, err = probe.Do("GET", key)
	require.ErrorContains(t, err, "LOADING", "the master was loading throughout")
	t.Logf("fastest of 3 refreshes while the master loads: %v", fastest)
	require.Less(t, fastest, 90*time.Millisecond, "every refresh waited for the loading master")
	require.NoError(t, reloaded())

	// Loaded, it is brought back up and serves.
	for _, cl := range clients {
		waitFor(t, 10*time.Second, cl.name+" served by the master again", func() bool {
			return cl.op(cl.c, key+":1") == nil
		})
	}
}
