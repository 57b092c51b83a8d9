package shard_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// retriesByNode returns NodeStats.Retries by address (masters only).
func retriesByNode(c *shard.Client) map[string]int64 {
	out := map[string]int64{}
	for _, n := range c.Stats().Nodes {
		if !n.ReadOnly {
			out[n.Node.Addr] = n.Retries
		}
	}
	return out
}

// TestReview9TxRetriesCountTheResends: NodeStats.Retries counts the
// commands sent again to a node (shardis_node_retries_total: "sent again
// to the node"). A Do redirected by MOVED counts one retry on the node it
// is sent to next; a Client.Tx counted it on the node that sent the MOVED,
// and counted one more when it gave up, for an attempt never sent.
func TestReview9TxRetriesCountTheResends(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ctx := context.Background()
	m := rc.Masters()
	require.Len(t, m, 3)
	newC := func() *shard.Client {
		cfg := clusterConfig(rc.Seeds()...)
		cfg.Health.Interval = -1
		cfg.Cluster.MaxRetryWait = 300 * time.Millisecond
		return newClient(t, cfg)
	}
	ops := map[string]func(c *shard.Client, key string) error{
		"Do": func(c *shard.Client, key string) error {
			_, err := c.Do(ctx, "SET", key, "v")
			return err
		},
		"Tx": func(c *shard.Client, key string) error {
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error { return tx.Queue("SET", key, "v") })
			return err
		},
	}
	for i, name := range []string{"Do", "Tx"} {
		t.Run("MOVED "+name, func(t *testing.T) {
			from, to := m[i], m[(i+1)%len(m)]
			key, slot := keyOnMaster(t, rc, from, "r9txr"+name)
			c := newC()
			_, err := c.Do(ctx, "GET", key) // the client knows the slot's master
			require.NoError(t, err)
			moveSlot(t, slot, from, to, m) // the slot is empty: nothing to migrate
			before := retriesByNode(c)
			require.NoError(t, ops[name](c, key))
			after := retriesByNode(c)
			assert.Equal(t, int64(0), after[from.Addr]-before[from.Addr], "nothing was sent again to %s, which sent the MOVED", from.Addr)
			assert.Equal(t, int64(1), after[to.Addr]-before[to.Addr], "the command was sent again to %s", to.Addr)
		})
	}
	for _, name := range []string{"Do", "Tx"} {
		t.Run("give up "+name, func(t *testing.T) {
			key, slot := keyOnMaster(t, rc, m[2], "r9txg"+name)
			c := newC()
			_, err := c.Do(ctx, "GET", key)
			require.NoError(t, err)
			// The master stops serving the slot (CLUSTERDOWN for the key)
			// until it is given back.
			s := strconv.Itoa(slot)
			_, err = m[2].Do("CLUSTER", "DELSLOTS", s)
			require.NoError(t, err)
			t.Cleanup(func() { m[2].Do("CLUSTER", "ADDSLOTS", s) }) //nolint:errcheck // best effort
			before := retriesByNode(c)
			err = ops[name](c, key)
			var re *shard.RetryError
			require.True(t, errors.As(err, &re), "%v", err)
			_, aerr := m[2].Do("CLUSTER", "ADDSLOTS", s)
			require.NoError(t, aerr)
			after := retriesByNode(c)
			var sent int64
			for addr, n := range after {
				sent += n - before[addr]
			}
			assert.Equal(t, int64(re.Attempts-1), sent, "%d attempts: the first, and %d sent again", re.Attempts, re.Attempts-1)
		})
	}
}
