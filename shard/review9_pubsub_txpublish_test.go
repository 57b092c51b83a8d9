package shard_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nameOn returns the first prefix+N that the ring routes to addr.
func nameOn(t *testing.T, rr *shard.RingRouter, prefix, addr string) string {
	t.Helper()
	for i := 0; i < 10000; i++ {
		name := prefix + strconv.Itoa(i)
		if n, err := rr.Route(name); err == nil && n.Addr == addr {
			return name
		}
	}
	t.Fatalf("no %s* on %s", prefix, addr)
	return ""
}

// In ring mode PUBLISH goes to the shard its channel hashes to, where a
// Subscription listens. Inside a transaction it went to the transaction's
// shard instead, whatever the channel: a channel of another shard reached
// no subscriber (PUBLISH answered 0) and the message was silently lost,
// where a key of another shard is refused with a *CrossShardError before
// anything is sent. A Conn's MULTI of PUBLISH alone was refused for want
// of a key, though the channel names the shard.
func TestReview9PubSubPublishInTransactionFollowsTheChannel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	c := newClient(t, ringConfig(servers))
	rr, ok := c.Router().(*shard.RingRouter)
	require.True(t, ok, "%T", c.Router())
	chA, keyA := nameOn(t, rr, "chan", servers[0].Addr), nameOn(t, rr, "key", servers[0].Addr)
	chB := nameOn(t, rr, "chan", servers[1].Addr)

	sub, err := c.Subscribe(ctx, chA, chB)
	require.NoError(t, err)
	defer sub.Close()
	for i := 0; i < 2; i++ { // the two confirmations
		v, err := sub.Receive(ctx)
		require.NoError(t, err)
		require.IsType(t, redis.Subscription{}, v)
	}

	t.Run("Tx", func(t *testing.T) {
		for _, spublish := range []string{"PUBLISH", "SPUBLISH"} {
			_, err := c.Tx(ctx, []string{keyA}, func(tx *shard.Tx) error {
				return tx.Queue(spublish, chB, "lost")
			})
			var cross *shard.CrossShardError
			assert.True(t, errors.As(err, &cross), "%s of a channel of another shard in a transaction: %v", spublish, err)
		}
		replies, err := c.Tx(ctx, []string{keyA}, func(tx *shard.Tx) error {
			if err := tx.Queue("SET", keyA, "v"); err != nil {
				return err
			}
			return tx.Queue("PUBLISH", chA, "tx")
		})
		require.NoError(t, err)
		require.Len(t, replies, 2)
		assert.Equal(t, int64(1), replies[1], "PUBLISH of the transaction's shard reaches the subscriber")
	})

	t.Run("Conn", func(t *testing.T) {
		conn := c.Conn()
		defer conn.Close()
		require.NoError(t, conn.Send("MULTI"))
		require.NoError(t, conn.Send("SET", keyA, "v"))
		require.NoError(t, conn.Send("PUBLISH", chB, "lost"))
		_, err := conn.Do("EXEC")
		var cross *shard.CrossShardError
		assert.True(t, errors.As(err, &cross), "PUBLISH of a channel of another shard in MULTI: %v", err)

		// A MULTI of PUBLISH alone runs on the channel's shard.
		require.NoError(t, conn.Send("MULTI"))
		require.NoError(t, conn.Send("PUBLISH", chB, "conn"))
		replies, err := redis.Values(conn.Do("EXEC"))
		require.NoError(t, err)
		require.Len(t, replies, 1)
		assert.Equal(t, int64(1), replies[0], "PUBLISH reaches the subscriber")
	})

	// What reached the subscriber: the transactions' messages, and
	// nothing else.
	require.NoError(t, sub.Unsubscribe(ctx))
	var got []string
	for done := 0; done < 2; {
		v, err := sub.Receive(ctx)
		require.NoError(t, err)
		switch m := v.(type) {
		case redis.Message:
			got = append(got, m.Channel+"="+string(m.Data))
		case redis.Subscription:
			done++
		}
	}
	assert.Equal(t, []string{chA + "=tx", chB + "=conn"}, got)
}
