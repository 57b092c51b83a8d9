package shard_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A transaction whose function returns the error of a BLPOP sent through
// Tx.Do that a failover's demoted master unblocked (UNBLOCKED) popped
// nothing, and the server closed the transaction's connection after that
// reply: nothing ran, as after a READONLY refusal or a connection the
// server closed, and the transaction, fn included, runs again at the
// slot's new master instead of returning the server's UNBLOCKED.
func TestReview21TxFnReturningUnblockedRunsAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	c := newClient(t, clusterConfig(rc.Seeds()...))
	m := rc.Masters()[0]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	key, slot := keyOnMaster(t, rc, m, "r21txub")
	got := key + ":got" // watched; in key's slot (its hash tag)

	var attempts, unblocked atomic.Int32
	type result struct {
		v   []any
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := c.Tx(context.Background(), []string{got}, func(tx *shard.Tx) error {
			attempts.Add(1)
			v, err := redis.Strings(tx.Do("BLPOP", key, 60))
			if err != nil {
				if strings.HasPrefix(err.Error(), "UNBLOCKED") {
					unblocked.Add(1)
				}
				return err // as most functions do
			}
			return tx.Queue("SET", got, v[1])
		})
		done <- result{v, err}
	}()
	waitFor(t, 20*time.Second, "the BLPOP blocked on the master", func() bool { return blockedClients(m) >= 1 })
	failOverSlot(t, rc, rep, slot)
	awaitBlockedAgain(t, rep, 30*time.Second, done, func(r result) {
		require.NoError(t, r.err, "the transaction whose BLPOP the failover unblocked")
		t.Fatalf("the transaction ended (%v) before anything was pushed", r.v)
	})
	_, err = direct(t, rep.Addr).Do("RPUSH", key, "after")
	require.NoError(t, err)
	select {
	case r := <-done:
		require.NoError(t, r.err, "the transaction whose BLPOP the failover unblocked")
		assert.Equal(t, int32(1), unblocked.Load(), "the BLPOP unblocked once, by the demotion")
		assert.GreaterOrEqual(t, attempts.Load(), int32(2))
		v, err := redis.String(direct(t, rep.Addr).Do("GET", got))
		require.NoError(t, err)
		assert.Equal(t, "after", v)
	case <-time.After(60 * time.Second):
		t.Fatal("the transaction did not return")
	}
}
