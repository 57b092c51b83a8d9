package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSentinelTxFollowsReadOnlyMaster: a transaction that meets a master
// demoted behind the Sentinels' back (they are all dead and the periodic
// queries are off, so nothing else tells the client) fails with the
// READONLY reply and, as a write through Do does, makes the client ask the
// demoted master for its ROLE and follow it to the new master: the next
// transactions run there. Before, a client whose writes were all
// transactions wrote to the demoted master for good.
func TestSentinelTxFollowsReadOnlyMaster(t *testing.T) {
	for _, conn := range []bool{false, true} {
		t.Run(fmt.Sprintf("conn=%t", conn), func(t *testing.T) {
			set, cfg := loneSentinel(t) // only the failed transaction may trigger a query
			c := newClient(t, cfg)
			ctx := context.Background()
			const key = "txro"
			tx := func(v string) error {
				if conn {
					rc := c.Conn()
					defer rc.Close()
					if err := rc.Send("MULTI"); err != nil {
						return err
					}
					if err := rc.Send("SET", key, v); err != nil {
						return err
					}
					_, err := rc.Do("EXEC")
					return err
				}
				_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
					return tx.Queue("SET", key, v)
				})
				return err
			}
			require.NoError(t, tx("1"))
			_, next := unseenFailover(t, set)

			err := tx("2")
			require.Error(t, err)
			var re redis.Error
			require.ErrorAs(t, err, &re)
			assert.True(t, strings.HasPrefix(string(re), "READONLY") || strings.HasPrefix(string(re), "EXECABORT"), "%v", err)
			waitFor(t, 10*time.Second, "a transaction to succeed", func() bool { return tx("3") == nil })
			got, err := next.Do("GET", key)
			require.NoError(t, err)
			assert.Equal(t, "3", got)
			st := c.Stats().Sentinel[0]
			assert.Equal(t, next.Addr, st.Master)
			assert.Equal(t, int64(1), st.Failovers)
		})
	}
}
