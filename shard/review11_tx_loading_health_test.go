package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview11LoadingMasterIsMarkedDownUnderTransactions: a master that
// answers LOADING cannot serve, and its health check's PING fails with
// the same reply, which marks it down after FailureLimit ticks when it is
// idle. A client whose traffic is all transactions must see it marked
// down too: the replies of a transaction (a Client.Tx's, a Conn's
// WATCH ... MULTI ... EXEC) used to count as the node answering, LOADING
// to the queued commands included, and so did the OK that a loading
// server gives WATCH and MULTI, so that every transaction reset the
// health checks' count and the master stayed up (and every topology
// refresh kept asking it first).
func TestReview11LoadingMasterIsMarkedDownUnderTransactions(t *testing.T) {
	ctx := context.Background()
	rc, m := startHealthCluster(t)
	key, _ := keyOnMaster(t, rc, m, "review11txloading")
	clients := []*healthClient{
		{name: "Tx", op: func(c *shard.Client, key string) error {
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				return tx.Queue("SET", key, "v")
			})
			return err
		}},
		{name: "Tx with Do", op: func(c *shard.Client, key string) error {
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				if _, err := tx.Do("GET", key); err != nil {
					return err
				}
				return tx.Queue("SET", key, "v")
			})
			return err
		}},
		{name: "Conn", op: func(c *shard.Client, key string) error {
			conn := c.Conn()
			defer conn.Close()
			if _, err := conn.Do("WATCH", key); err != nil {
				return err
			}
			if _, err := conn.Do("GET", key); err != nil {
				return err
			}
			if err := conn.Send("MULTI"); err != nil {
				return err
			}
			if err := conn.Send("SET", key, "v"); err != nil {
				return err
			}
			_, err := conn.Do("EXEC")
			return err
		}},
		{name: "Conn MULTI", op: func(c *shard.Client, key string) error {
			conn := c.Conn()
			defer conn.Close()
			if err := conn.Send("MULTI"); err != nil {
				return err
			}
			if err := conn.Send("SET", key, "v"); err != nil {
				return err
			}
			_, err := conn.Do("EXEC")
			return err
		}},
	}
	openHealthClients(t, rc, m, 200*time.Millisecond, clients)
	for _, cl := range clients {
		require.NoError(t, cl.op(cl.c, key), "%s: before the reload", cl.name)
	}
	fillLargeKeys(t, clients[0].c, key, 300)
	for _, cl := range clients {
		_, _, ups := cl.upDown.down()
		n := cl.upDown.count()
		require.Zero(t, n, "%s: the master changed state before the reload (%d up)", cl.name, ups)
	}

	// 300 keys at 20 ms: some 6 s of LOADING.
	probe, reloaded := reloadSlowly(t, m, key, 20*time.Millisecond)
	start := time.Now()
	stop := keepBusy(clients, func(cl *healthClient, g int) {
		_ = cl.op(cl.c, fmt.Sprintf("%s:%d", key, g))
		cl.n.Add(1)
	})
	waitAllDown(clients, 3*time.Second)
	took := time.Since(start)
	// The transactions go on for a while longer: the master stays down.
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	_, err := probe.Do("GET", key)
	require.ErrorContains(t, err, "LOADING", "the master was loading throughout")
	for _, cl := range clients {
		ev, down, ups := cl.upDown.down()
		t.Logf("%s: NodeDown %v within %v, up again %d times (%d transactions): %v", cl.name, down, took, ups, cl.n.Load(), ev.Err)
	}
	for _, cl := range clients {
		ev, down, ups := cl.upDown.down()
		require.Positive(t, cl.n.Load(), "%s: no transaction was run", cl.name)
		require.True(t, down, "%s: a master answering LOADING to every transaction was not marked down in %v", cl.name, took)
		require.ErrorContains(t, ev.Err, "LOADING", cl.name)
		require.Zero(t, ups, "%s: the loading master was taken for up again", cl.name)
	}

	// A refresh now asks the other masters first: it no longer waits
	// for the loading one (askTopology's 100 ms hedge delay) each time.
	for _, cl := range clients {
		var fastest time.Duration
		for k := range 3 {
			s := time.Now()
			require.NoError(t, cl.c.Refresh(ctx))
			if d := time.Since(s); k == 0 || d < fastest {
				fastest = d
			}
		}
		t.Logf("%s: fastest of 3 refreshes while the master loads: %v", cl.name, fastest)
		require.Less(t, fastest, 90*time.Millisecond, "%s: every refresh waited for the loading master", cl.name)
	}
	_, err = probe.Do("GET", key)
	require.ErrorContains(t, err, "LOADING", "the master was loading throughout")
	require.NoError(t, reloaded())

	// Loaded, it is brought back up and serves the transactions.
	for _, cl := range clients {
		waitFor(t, 10*time.Second, cl.name+" served by the master again", func() bool {
			return cl.op(cl.c, key+":1") == nil
		})
		_, down, ups := cl.upDown.down()
		require.True(t, down && ups >= 1, "%s: the master served again without NodeUp", cl.name)
	}
}
