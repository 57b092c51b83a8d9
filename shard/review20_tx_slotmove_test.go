package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A transaction whose WATCHed key's slot moves, key and all, between its
// WATCH and its EXEC: it never applies at the old owner, and either runs
// again at the new one, once, or fails with an error that says so.
func TestReview20TxWatchedSlotMoves(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	for _, finish := range []bool{true, false} {
		t.Run(fmt.Sprintf("finished=%v", finish), func(t *testing.T) {
			c := newClient(t, clusterConfig(rc.Seeds()...))
			m := rc.Masters()
			require.Len(t, m, 3)
			a := m[0]
			key, slot := keyOnMaster(t, rc, a, fmt.Sprintf("r20txmv%v", finish))
			b, err := rc.OtherMaster(a)
			require.NoError(t, err)
			_, err = c.Do(ctx, "SET", key, 5)
			require.NoError(t, err)

			attempts := 0
			vals, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				attempts++
				v, err := redis.Int(tx.Do("GET", key))
				if err != nil {
					return err
				}
				if attempts == 1 {
					if finish {
						_, err = redistest.MoveSlot(ctx, slot, a, b, rc.Masters(), redistest.SlotMoveOptions{})
						require.NoError(t, err)
					} else {
						// The key moves, the slot stays migrating.
						migratingSlot(t, slot, a, b)
						_, err := a.Do("MIGRATE", "127.0.0.1", fmt.Sprint(b.Port), key, "0", "5000")
						require.NoError(t, err)
					}
				}
				return tx.Queue("SET", key, v+1)
			})
			if err == nil {
				require.Len(t, vals, 1)
				assert.Equal(t, "OK", vals[0])
			} else {
				assert.ErrorIs(t, err, shard.ErrTxAborted, "a failure names the changed key: %v", err)
			}
			n, cerr := redis.Int(direct(t, a.Addr).Do("CLUSTER", "COUNTKEYSINSLOT", slot))
			require.NoError(t, cerr)
			assert.Zero(t, n, "nothing was written at the old owner")
			conn := direct(t, b.Addr)
			if !finish {
				_, _ = conn.Do("ASKING")
			}
			got, cerr := redis.Int(conn.Do("GET", key))
			require.NoError(t, cerr)
			if err == nil {
				assert.Equal(t, 6, got, "the transaction ran once, at the new owner (attempts %d)", attempts)
			} else {
				assert.Equal(t, 5, got)
			}
			t.Logf("attempts %d err %v", attempts, err)
		})
	}
}
