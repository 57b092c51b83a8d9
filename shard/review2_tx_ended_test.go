package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview2LentConnEndedContextWritesNothing: a command given, with a
// context that has already ended, to tx.Do or to redis.DoContext on a
// ForEachShard connection is not written: it fails with the context's
// error and the list keeps its element. Before, the command was written
// (the connection was closed only afterwards, from another goroutine), so
// LPOP or BLPOP removed an element whose reply nobody got.
func TestReview2LentConnEndedContextWritesNothing(t *testing.T) {
	c, _ := startRing(t, 1)
	bg := context.Background()
	const list = "r2e:list"
	pops := map[string]func(ctx context.Context, cancel context.CancelFunc) error{
		"Tx.Do LPOP": func(ctx context.Context, cancel context.CancelFunc) error {
			_, err := c.Tx(ctx, []string{list}, func(tx *shard.Tx) error {
				cancel()
				_, err := tx.Do("LPOP", list)
				return err
			})
			return err
		},
		"Tx.Do BLPOP": func(ctx context.Context, cancel context.CancelFunc) error {
			_, err := c.Tx(ctx, []string{list}, func(tx *shard.Tx) error {
				cancel()
				_, err := tx.Do("BLPOP", list, 1)
				return err
			})
			return err
		},
		"ForEachShard LPOP": func(ctx context.Context, cancel context.CancelFunc) error {
			return c.ForEachShard(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
				cancel()
				_, err := redis.DoContext(conn, ctx, "LPOP", list)
				return err
			})
		},
	}
	for name, pop := range pops {
		t.Run(name, func(t *testing.T) {
			_, err := c.Do(bg, "DEL", list)
			require.NoError(t, err)
			_, err = c.Do(bg, "RPUSH", list, "a")
			require.NoError(t, err)
			for i := range 20 {
				ctx, cancel := context.WithCancel(bg)
				err := pop(ctx, cancel)
				cancel()
				require.ErrorIs(t, err, context.Canceled, "attempt %d", i)
				n, err := redis.Int(c.Do(bg, "LLEN", list))
				require.NoError(t, err)
				require.Equal(t, 1, n, fmt.Sprintf("attempt %d: a pop under an ended context removed the element", i))
			}
		})
	}
}
