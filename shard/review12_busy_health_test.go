package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview12BusyMasterIsMarkedDownUnderTraffic: a master stuck in a
// script answers BUSY to its health check's PING, which marks it down
// after FailureLimit ticks when it is idle. The BUSY replies that its
// callers' commands get are their own error replies, but no proof that
// the node serves: they used to count as the node answering and reset
// the health checks' count, so that a master stuck for seconds under
// traffic was never marked down. Both ways a command is read count: a
// Do's (the automatic pipeline) and a Pipeline's.
func TestReview12BusyMasterIsMarkedDownUnderTraffic(t *testing.T) {
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
			res, err := p.Exec(ctx)
			if err == nil && len(res) > 0 {
				err = res[0].Err
			}
			return err
		}},
	}
	openHealthClients(t, rc, m, 0, clients)
	key, _ := keyOnMaster(t, rc, m, "review12busyhealth")
	for _, cl := range clients {
		require.NoError(t, cl.op(cl.c, key), "%s: the master serves to begin with", cl.name)
	}

	end := busyServer(t, m)
	start := time.Now()
	// n counts the reads answered BUSY.
	stop := keepBusy(clients, func(cl *healthClient, _ int) {
		if err := cl.op(cl.c, key); err != nil && isBusy(err) {
			cl.n.Add(1)
		}
	})
	waitAllDown(clients, 4*time.Second)
	took := time.Since(start)
	stop()
	for _, cl := range clients {
		ev, down, ups := cl.upDown.down()
		t.Logf("%s: NodeDown %v within %v, up again %d times (%d reads answered BUSY): %v", cl.name, down, took, ups, cl.n.Load(), ev.Err)
	}
	for _, cl := range clients {
		ev, down, ups := cl.upDown.down()
		require.Positive(t, cl.n.Load(), "%s: no read met the busy master", cl.name)
		require.True(t, down, "%s: a master answering BUSY to every command was not marked down in %v", cl.name, took)
		require.ErrorContains(t, ev.Err, "BUSY", cl.name)
		require.Zero(t, ups, "%s: the busy master was taken for up again", cl.name)
	}
	end()
	for _, cl := range clients {
		waitFor(t, 10*time.Second, cl.name+" served by the master again", func() bool {
			return cl.op(cl.c, key) == nil
		})
	}
}

// isBusy reports whether err is (or wraps) a BUSY reply (not BUSYKEY nor
// BUSYGROUP).
func isBusy(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(string(re), "BUSY ")
}
