package shard_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestReview5ConnTransactionLearnsAMovedSlot: a Conn does not follow
// redirects inside a transaction, but the MOVED its transaction meets
// tells the client where the slot went, so the caller's next attempt runs
// at the new owner. The Conn ignored it: every MULTI ... EXEC on the slot
// was sent to the old owner again and refused with MOVED until the next
// periodic refresh (a minute by default). And a WATCH the old owner
// refused with MOVED kept the Conn pinned to it, though nothing was
// watched there: every later WATCH went there too, for good.
func TestReview5ConnTransactionLearnsAMovedSlot(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Health.Interval = -1
	c := newClient(t, cfg)
	ctx := context.Background()
	m := rc.Masters()
	require.Len(t, m, 3)

	for i, watch := range []bool{false, true} {
		name := map[bool]string{false: "MULTI first", true: "WATCH first"}[watch]
		t.Run(name, func(t *testing.T) {
			key, slot := keyOnMaster(t, rc, m[i], "r5moved")
			_, err := c.Do(ctx, "GET", key) // the client has the slot map
			require.NoError(t, err)
			to := m[(i+1)%len(m)]
			moveSlot(t, slot, m[i], to, m) // the slot is empty: nothing to migrate

			conn := c.Conn()
			defer conn.Close()
			// A caller's retry loop, as with a redigo connection: on an
			// error, run the whole transaction again.
			attempt := func() ([]any, error) {
				if watch {
					if _, err := conn.Do("WATCH", key); err != nil {
						return nil, err
					}
				}
				if err := conn.Send("MULTI"); err != nil {
					return nil, err
				}
				if err := conn.Send("SET", key, "v"); err != nil {
					return nil, err
				}
				return redis.Values(conn.Do("EXEC"))
			}
			_, err = attempt() // meets the MOVED
			require.Error(t, err)
			require.Contains(t, err.Error(), "MOVED")
			reply, err := attempt()
			require.NoError(t, err, "the transaction went to the slot's old owner again")
			require.Equal(t, []any{"OK"}, reply)
			got, err := redis.String(direct(t, to.Addr).Do("GET", key))
			require.NoError(t, err)
			require.Equal(t, "v", got)
		})
	}
}
