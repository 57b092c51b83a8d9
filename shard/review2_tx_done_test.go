package shard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview2TxUsedAfterItsFunction: a Tx kept past its function fails
// with ErrTxDone instead of accepting a command that never runs.
func TestReview2TxUsedAfterItsFunction(t *testing.T) {
	c, _ := startRing(t, 1)
	bg := context.Background()
	var kept *shard.Tx
	_, err := c.Tx(bg, []string{"r2tx:late"}, func(tx *shard.Tx) error {
		kept = tx
		return tx.Queue("SET", "r2tx:late", "1")
	})
	require.NoError(t, err)
	require.NotNil(t, kept)
	err = kept.Queue("SET", "r2tx:late", "2")
	require.ErrorIs(t, err, shard.ErrTxDone)
	_, err = kept.Do("GET", "r2tx:late")
	require.ErrorIs(t, err, shard.ErrTxDone)
	v, err := redis.String(c.Do(bg, "GET", "r2tx:late"))
	require.NoError(t, err)
	require.Equal(t, "1", v)
}

// TestReview2TxQueueFromGoroutines: fn may queue from several goroutines
// (it waits for them): every command runs, once, without a data race.
func TestReview2TxQueueFromGoroutines(t *testing.T) {
	c, _ := startRing(t, 1)
	bg := context.Background()
	const workers, each = 4, 25
	reply, err := c.Tx(bg, []string{"r2tx:par"}, func(tx *shard.Tx) error {
		errs := make(chan error, workers*each)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					errs <- tx.Queue("INCR", "r2tx:par")
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Len(t, reply, workers*each)
	n, err := redis.Int(c.Do(bg, "GET", "r2tx:par"))
	require.NoError(t, err)
	require.Equal(t, workers*each, n)
}
