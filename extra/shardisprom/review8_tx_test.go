package shardisprom_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview8TransactionIsMeasured: a transaction's commands are measured
// on their node, its WATCH and Tx.Do under their names, each MULTI ...
// EXEC as a PIPELINE part, and one aborted by a watched key as
// server_error; before, a program measuring its calls saw nothing of its
// transactions.
func TestReview8TransactionIsMeasured(t *testing.T) {
	d := shardisprom.NewDurations(nil, nil)
	c, servers := ringClient(t, 1, d.Hooks())
	s := servers[0]
	ctx := context.Background()
	const key = "r8promtx"
	_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		if _, err := tx.Do("GET", key); err != nil {
			return err
		}
		return tx.Queue("SET", key, "1")
	})
	require.NoError(t, err)
	_, err = c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		conn, err := redis.Dial("tcp", s.Addr, redis.DialUsername("app"), redis.DialPassword(password))
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.Do("SET", key, "changed"); err != nil {
			return err
		}
		return tx.Queue("SET", key, "2")
	})
	require.ErrorIs(t, err, shard.ErrTxAborted)
	assert.Equal(t, map[string]uint64{
		s.Addr + " WATCH ok":           2,
		s.Addr + " GET ok":             1,
		s.Addr + " MULTI ok":           1, // the MULTI ... EXEC batch (PipelineEvent.Operation)
		s.Addr + " MULTI server_error": 1,
	}, durationSeries(t, d))
}
