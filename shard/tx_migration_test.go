package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Transactions on a slot that migrates under them (6,000 keys moved 10
// at a time, a second or more of IMPORTING/MIGRATING) all succeed: a
// redirected transaction runs again, at the importing node with ASKING
// while the slot moves, within MaxRetryWait (it used to give up after six
// attempts in about 170 ms, on about 100 of 2,500). Every transaction that
// succeeded is counted exactly once: the counters hold the number of
// successes.
func TestTransactionsSurviveASlotMigration(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and migrates a 6,000-key slot")
	}
	const (
		workers = 8
		minTx   = 2500
		fill    = 6000
	)
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ctx := context.Background()
	for _, auto := range []bool{false, true} {
		name := "pooled"
		if auto {
			name = "auto-pipelined"
		}
		t.Run(name, func(t *testing.T) {
			cfg := clusterConfig(rc.Seeds()...)
			cfg.DisableAutoPipeline = !auto
			c := newClient(t, cfg)
			tag := "{txm-" + name + "}"
			slot := cluster.Slot(tag)
			src, err := rc.MasterOfSlot(slot)
			require.NoError(t, err)
			dst, err := rc.OtherMaster(src)
			require.NoError(t, err)

			p := c.Pipeline()
			for i := range fill {
				p.Send("SET", fmt.Sprintf("%s:fill:%d", tag, i), i)
				if p.Len() == 1000 {
					res, err := p.Exec(ctx)
					require.NoError(t, err)
					for _, r := range res {
						require.NoError(t, r.Err)
					}
				}
			}
			for w := range workers {
				_, err := c.Do(ctx, "MSET", fmt.Sprintf("%s:ctr:%d", tag, w), 0, fmt.Sprintf("%s:ctr:%d:b", tag, w), 0)
				require.NoError(t, err)
			}

			var (
				wg        sync.WaitGroup
				migrating atomic.Bool
				stop      atomic.Bool
				during    atomic.Int64 // transactions started while the slot moved
				total     atomic.Int64
				mu        sync.Mutex
				failures  []error
				successes [workers]int
			)
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					key := fmt.Sprintf("%s:ctr:%d", tag, w)
					keys := []string{key}
					if w%2 == 1 {
						// Two keys: at the importing node while only one
						// of them has moved, Redis answers TRYAGAIN.
						keys = append(keys, key+":b")
					}
					for !stop.Load() {
						if migrating.Load() {
							during.Add(1)
						}
						total.Add(1)
						_, err := c.Tx(ctx, keys, func(tx *shard.Tx) error {
							n, err := redis.Int(tx.Do("GET", key))
							if err != nil {
								return err
							}
							if len(keys) == 2 {
								if err := tx.Queue("INCR", keys[1]); err != nil {
									return err
								}
							}
							return tx.Queue("SET", key, n+1)
						})
						if err != nil {
							mu.Lock()
							failures = append(failures, err)
							mu.Unlock()
							continue
						}
						successes[w]++
					}
				}()
			}
			waitFor(t, 10*time.Second, "transactions to run", func() bool { return total.Load() >= 100 })
			migrating.Store(true)
			start := time.Now()
			// Throttled, 10 keys at a time, as a migration tool does.
			calls, err := redistest.MoveSlot(ctx, slot, src, dst, rc.Masters(), redistest.SlotMoveOptions{Batch: 10, Pause: time.Millisecond})
			took := time.Since(start)
			migrating.Store(false)
			// Enough transactions in all, and some more after the move.
			after := total.Load()
			for total.Load() < max(minTx, after+100) {
				time.Sleep(10 * time.Millisecond)
			}
			stop.Store(true)
			wg.Wait()
			require.NoError(t, err, "migration")
			t.Logf("%s: slot %d moved in %v (%d MIGRATE calls); %d transactions, %d while it moved, %d failed",
				name, slot, took, calls, total.Load(), during.Load(), len(failures))
			for i, f := range failures {
				if i < 5 {
					t.Errorf("failed transaction: %v", f)
				}
			}
			assert.Empty(t, failures, "transactions that failed")
			assert.GreaterOrEqual(t, during.Load(), int64(minTx/5), "transactions ran while the slot moved")

			owner, err := rc.MasterOfSlot(slot)
			require.NoError(t, err)
			assert.Equal(t, dst.Addr, owner.Addr, "the slot moved")
			for w := range workers {
				key := fmt.Sprintf("%s:ctr:%d", tag, w)
				n, err := redis.Int(c.Do(ctx, "GET", key))
				require.NoError(t, err)
				assert.Equal(t, successes[w], n, "worker %d: every successful transaction counted once", w)
				b, err := redis.Int(c.Do(ctx, "GET", key+":b"))
				require.NoError(t, err)
				if w%2 == 1 {
					assert.Equal(t, successes[w], b, "worker %d: both keys of each transaction written", w)
				}
			}
			var ask, tryAgain int64
			for _, st := range c.Stats().Nodes {
				ask += st.Ask
				tryAgain += st.TryAgain
			}
			t.Logf("%s: ASK %d, TRYAGAIN %d", name, ask, tryAgain)
			assert.Positive(t, ask, "transactions met ASK")
			count, err := dst.Do("CLUSTER", "COUNTKEYSINSLOT", fmt.Sprint(slot))
			require.NoError(t, err)
			assert.Equal(t, fmt.Sprint(fill+2*workers), strings.TrimSpace(count), "every key moved")
		})
	}
}

// A transaction on the slots of a master that dies waits, within
// MaxRetryWait, for its replica to take over, as single commands do: a
// node that could not be reached was sent nothing, so the transaction
// runs again once the topology names the new master (it used to fail at
// once with the dial error).
func TestTransactionsWaitForAFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and kills a master")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.MaxRetryWait = 20 * time.Second // a loaded machine elects slowly
	c := newClient(t, cfg)
	ctx := context.Background()
	key := "{txf}:n"
	_, err := c.Do(ctx, "SET", key, 0)
	require.NoError(t, err)
	victim, err := rc.MasterOfSlot(cluster.Slot(key))
	require.NoError(t, err)
	replica, err := rc.ReplicaOf(victim)
	require.NoError(t, err)
	// The replica has the value before its master dies.
	acked, err := redis.Int(c.DoKey(ctx, key, "WAIT", 1, 5000))
	require.NoError(t, err)
	require.Equal(t, 1, acked, "the replica acknowledged the write")
	require.NoError(t, victim.Kill())

	start := time.Now()
	for i := 1; i <= 20; i++ {
		out, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
			return tx.Queue("INCR", key)
		})
		require.NoError(t, err, "transaction %d, %v after the kill", i, time.Since(start))
		require.Len(t, out, 1)
		assert.Equal(t, int64(i), out[0], "transaction %d", i)
	}
	t.Logf("20 transactions done %v after the master was killed", time.Since(start))
	owner, err := rc.MasterOfSlot(cluster.Slot(key))
	require.NoError(t, err)
	assert.Equal(t, replica.Addr, owner.Addr, "the replica took over")
}
