package shard_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// transfer moves amount from one account to another atomically.
func transfer(ctx context.Context, c *shard.Client, from, to string, amount int) error {
	_, err := c.Tx(ctx, []string{from, to}, func(tx *shard.Tx) error {
		bal, err := redis.Int(tx.Do("GET", from))
		if err != nil && !errors.Is(err, redis.ErrNil) {
			return err
		}
		if bal < amount {
			return errors.New("insufficient funds")
		}
		if err := tx.Queue("DECRBY", from, amount); err != nil {
			return err
		}
		return tx.Queue("INCRBY", to, amount)
	})
	return err
}

func testTx(t *testing.T, c *shard.Client) {
	ctx := context.Background()
	a, b := "{acct}alice", "{acct}bob"
	_, err := c.Do(ctx, "MSET", a, 1000, b, 0)
	require.NoError(t, err)

	var wg sync.WaitGroup
	var mu sync.Mutex
	aborted := 0
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				for {
					err := transfer(ctx, c, a, b, 10)
					if errors.Is(err, shard.ErrTxAborted) {
						mu.Lock()
						aborted++
						mu.Unlock()
						continue
					}
					assert.NoError(t, err)
					break
				}
			}
		}()
	}
	wg.Wait()
	vals, err := redis.Ints(c.Do(ctx, "MGET", a, b))
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1000}, vals, "100 transfers of 10, none lost or doubled")
	t.Logf("%d optimistic-lock retries", aborted)

	// Keys on different slots or shards are refused before anything is sent.
	_, err = c.Tx(ctx, []string{"x", "y", "z", "w"}, func(tx *shard.Tx) error { return nil })
	assert.ErrorIs(t, err, shard.ErrCrossShard)
	_, err = c.Tx(ctx, []string{a}, func(tx *shard.Tx) error { return tx.Queue("SET", "elsewhere-key", 1) })
	assert.ErrorIs(t, err, shard.ErrCrossShard)
	_, err = c.Tx(ctx, nil, func(tx *shard.Tx) error { return nil })
	assert.ErrorIs(t, err, shard.ErrBadCommand)
	// fn's error aborts and is returned.
	boom := errors.New("boom")
	_, err = c.Tx(ctx, []string{a}, func(tx *shard.Tx) error { return boom })
	assert.ErrorIs(t, err, boom)
	// EXEC returns the queued replies.
	res, err := c.Tx(ctx, []string{a}, func(tx *shard.Tx) error {
		tx.Queue("SET", a, "5")
		return tx.Queue("INCR", a)
	})
	require.NoError(t, err)
	assert.Equal(t, []any{"OK", int64(6)}, res)
}

func TestTxRingMode(t *testing.T) {
	c, _ := startRing(t, 3)
	testTx(t, c)
}

func TestTxClusterMode(t *testing.T) {
	rc := clusterForTest(t)
	testTx(t, newClient(t, clusterConfig(rc.Seeds()...)))
}
