package shard_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview14ClusterTxWithAWriteInFnIsNotRetried: in cluster mode a
// transaction redirected or refused before EXEC runs again, fn included.
// A write fn sent through tx.Do ran at once (outside MULTI): running fn
// again would apply it twice. Each case increments a counter with tx.Do,
// then makes the node refuse the queued command (MOVED after the slot
// moved, ASK while it migrates, CLUSTERDOWN while it is not served and
// served again when fn runs a second time): the counter moves once, fn
// runs once, and the error says why the transaction was not run again
// while still carrying the server's reply. (CLUSTERDOWN: the slot is
// served again after the first MULTI ... EXEC, so that an attempt after
// it would run.)
func TestReview14ClusterTxWithAWriteInFnIsNotRetried(t *testing.T) {
	rc, m := partialCoverageCluster(t)
	ctx := context.Background()
	cases := []struct {
		name string
		code string
		from *redistest.Server
		to   *redistest.Server
		cut  func(t *testing.T, key string, slot int, from, to *redistest.Server)
		mend bool // the slot is served again after the first MULTI ... EXEC
	}{
		{name: "MOVED", code: "MOVED", from: m[0], to: m[1],
			cut: func(t *testing.T, _ string, slot int, from, to *redistest.Server) {
				moveSlot(t, slot, from, to, m) // the counter moves with it
			}},
		{name: "ASK", code: "ASK", from: m[1], to: m[2],
			cut: func(t *testing.T, key string, slot int, from, to *redistest.Server) {
				migratingSlot(t, slot, from, to)
				host, port, err := net.SplitHostPort(to.Addr)
				require.NoError(t, err)
				_, err = from.Do("MIGRATE", host, port, "", "0", "5000", "KEYS", key+":n")
				require.NoError(t, err)
			}},
		{name: "CLUSTERDOWN", code: "CLUSTERDOWN", from: m[2], to: nil,
			cut: func(t *testing.T, _ string, slot int, from, _ *redistest.Server) {
				delSlot(t, from, slot)
			},
			mend: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, slot := keyOnMaster(t, rc, tc.from, "r14txw"+tc.name)
			cfg := txClusterConfig(rc, 5*time.Second)
			var mended bool
			var mendErr error
			if tc.mend {
				// Served again once the first MULTI ... EXEC was
				// refused: an attempt after it would write again.
				cfg.Hooks = &shard.Hooks{Pipeline: func(context.Context, *shard.PipelineEvent) {
					if !mended {
						mended = true
						_, mendErr = tc.from.Do("CLUSTER", "ADDSLOTS", strconv.Itoa(slot))
					}
				}}
			}
			c := newClient(t, cfg)
			learnSlotOwner(ctx, t, c, key)
			runs := 0
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				runs++
				if _, err := tx.Do("INCR", key+":n"); err != nil {
					return err
				}
				if runs == 1 {
					tc.cut(t, key, slot, tc.from, tc.to)
				}
				return tx.Queue("SET", key, "v")
			})
			assert.Equal(t, 1, runs, "a transaction whose fn wrote was run again")
			require.NoError(t, mendErr)
			owner := tc.from
			if tc.to != nil {
				owner = tc.to
			}
			// ASKING: at the importing node, while the slot migrates.
			conn := direct(t, owner.Addr)
			_, gerr := conn.Do("ASKING")
			require.NoError(t, gerr)
			got, gerr := redis.String(conn.Do("GET", key+":n"))
			require.NoError(t, gerr)
			assert.Equal(t, "1", got, "the increment fn sent through tx.Do ran %s times", got)
			require.Error(t, err)
			assert.True(t, errors.Is(err, shard.ErrTxNotRetried), "%v", err)
			var re redis.Error
			require.True(t, errors.As(err, &re), "%v", err)
			assert.True(t, strings.HasPrefix(string(re), tc.code), "%v", err)
			assert.False(t, errors.Is(err, shard.ErrRetryBudget), "%v", err)
		})
	}
}

// TestReview14ClusterTxWithARefusedWriteInFnIsRetried: a write of fn that
// the node refused (MOVED: the slot moved after WATCH) did not run, so the
// transaction still runs again, at the new owner, and the counter moves
// once.
func TestReview14ClusterTxWithARefusedWriteInFnIsRetried(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ctx := context.Background()
	m := rc.Masters()
	require.Len(t, m, 3)
	key, slot := keyOnMaster(t, rc, m[0], "r14txr")
	c := newClient(t, txClusterConfig(rc, 5*time.Second))
	learnSlotOwner(ctx, t, c, key)
	runs := 0
	var first error
	vals, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		runs++
		if runs == 1 {
			moveSlot(t, slot, m[0], m[1], m) // after WATCH, before the write
		}
		_, err := tx.Do("INCR", key+":n")
		if runs == 1 {
			first = err
		}
		if err != nil {
			return err
		}
		return tx.Queue("SET", key, "v")
	})
	require.NoError(t, err)
	assert.Equal(t, []any{"OK"}, vals)
	assert.Equal(t, 2, runs)
	var re redis.Error
	require.True(t, errors.As(first, &re), "%v", first)
	assert.True(t, strings.HasPrefix(string(re), "MOVED"), "%v", first)
	got, err := m[1].Do("GET", key+":n")
	require.NoError(t, err)
	assert.Equal(t, "1", got)
}

// TestReview14ClusterTxWithAWriteInFnIsNotRetriedAfterAFailover: the
// master fails over (CLUSTER FAILOVER on its replica) between fn's write
// and EXEC; the demoted master refuses the queued command. The increment
// fn sent through tx.Do, replicated before the failover, is not applied a
// second time at the new master.
func TestReview14ClusterTxWithAWriteInFnIsNotRetriedAfterAFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	m := rc.Masters()[0]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	key, slot := keyOnMaster(t, rc, m, "r14txfo")
	c := newClient(t, txClusterConfig(rc, 10*time.Second))
	learnSlotOwner(ctx, t, c, key)
	runs := 0
	_, err = c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		runs++
		if _, err := tx.Do("INCR", key+":n"); err != nil {
			return err
		}
		if runs == 1 {
			// The replica has the increment before it takes over.
			if n, err := redis.Int(tx.Do("WAIT", 1, 10000)); err != nil || n != 1 {
				return fmt.Errorf("WAIT: %d, %w", n, err)
			}
			_, err := rep.Do("CLUSTER", "FAILOVER")
			require.NoError(t, err)
			waitFor(t, 30*time.Second, "the replica to take over", func() bool {
				owner, err := rc.MasterOfSlot(slot)
				return err == nil && owner.Addr == rep.Addr && everyNodeSees(rc, m.Addr, "slave")
			})
		}
		return tx.Queue("SET", key, "v")
	})
	assert.Equal(t, 1, runs, "a transaction whose fn wrote was run again")
	got, gerr := rep.Do("GET", key+":n")
	require.NoError(t, gerr)
	assert.Equal(t, "1", got, "the increment fn sent through tx.Do ran %s times", got)
	require.Error(t, err)
	assert.True(t, errors.Is(err, shard.ErrTxNotRetried), "%v", err)
	var re redis.Error
	require.True(t, errors.As(err, &re), "%v", err)
	t.Logf("refused with %v", err)
}
