package shard_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview7TxPanicReachesTheCaller: the function given to Client.Tx
// runs on the caller's goroutine, where nothing of the client's is left
// half done (the connection is given back by a deferred release, the
// fence counts only MULTI/EXEC's round trip): its panic goes up to the
// caller unchanged, as PanicError's godoc says, and the connection it
// held goes back to the pool fresh (UNWATCH) or closed (SELECT).
func TestReview7TxPanicReachesTheCaller(t *testing.T) {
	noLeaks(t)
	c, _ := startRing(t, 2)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "r7tx:k", "0")
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		cmd  []any
	}{
		{"after a read", []any{"GET", "r7tx:k"}},
		{"after SELECT", []any{"SELECT", "0"}}, // the client's database: another is refused
	} {
		t.Run(tt.name, func(t *testing.T) {
			before, err := redis.Int(c.Do(ctx, "GET", "r7tx:k"))
			require.NoError(t, err)
			assert.PanicsWithValue(t, "review7: Tx", func() {
				_, _ = c.Tx(ctx, []string{"r7tx:k"}, func(tx *shard.Tx) error {
					_, err := tx.Do(tt.cmd[0].(string), tt.cmd[1:]...)
					assert.NoError(t, err)
					panic("review7: Tx")
				})
			})
			res, err := c.Tx(ctx, []string{"r7tx:k"}, func(tx *shard.Tx) error {
				return tx.Queue("INCR", "r7tx:k")
			})
			require.NoError(t, err)
			require.Len(t, res, 1)
			got, err := redis.Int(c.Do(ctx, "GET", "r7tx:k"))
			require.NoError(t, err)
			assert.Equal(t, before+1, got, "the INCR ran, on database 0")
			for _, st := range c.Stats().Nodes {
				assert.Equal(t, st.Pool.Active, st.Pool.Idle, "no connection of %s stays lent", st.Node)
			}
		})
	}
	require.NoError(t, c.Close())
}
