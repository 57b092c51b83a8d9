package shard_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A channel is subscribed, unsubscribed and subscribed again before the
// node's refusal of the first SUBSCRIBE (an ACL that did not allow the
// channel then, and allows it by the second) is read. The refusal
// dropped the name the second Subscribe had added: that call returned the
// first one's NOPERM, and the channel, subscribed on the server, never
// delivered.
func TestReview11PubSubRefusalOfAnEarlierSubscribeKeepsTheLaterOne(t *testing.T) {
	const user, pw = "r11edge", "r11edge-secret"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	srv := servers[0]
	_, err := srv.Do("ACL", "SETUSER", user, "on", ">"+pw, "~*", "+@all", "resetchannels", "&allowed*")
	require.NoError(t, err)
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = user, pw
	c := newClient(t, cfg)

	tag := strconv.FormatUint(rand.Uint64(), 36)
	ch := "later:" + tag
	sub, err := c.Subscribe(ctx, "allowed:"+tag) // the connection is open
	require.NoError(t, err)
	defer sub.Close()

	h := shard.HoldSubscription(sub)
	released := false
	defer func() {
		if !released {
			h.Release()
		}
	}()
	_, err = h.Review11Subscribe(ch)
	require.NoError(t, err)
	// The server has refused it (its ACL log says so) before the ACL
	// changes; the refusal is not read yet.
	waitFor(t, 10*time.Second, "the refusal in the ACL log", func() bool {
		out, err := srv.Do("ACL", "LOG")
		return err == nil && strings.Contains(out, ch)
	})
	_, err = srv.Do("ACL", "SETUSER", user, "&later:*")
	require.NoError(t, err)
	require.NoError(t, h.Review3Unsubscribe(ch))
	wait, err := h.Review11Subscribe(ch)
	require.NoError(t, err)
	h.Release()
	released = true

	require.NoError(t, wait(ctx), "the second Subscribe, which the server accepted")
	waitFor(t, 10*time.Second, "the channel subscribed on the server", func() bool {
		return numSub(t, srv, "NUMSUB", ch) == 1
	})
	n, err := redis.Int(c.Do(ctx, "PUBLISH", ch, "hello"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	for {
		v, err := sub.Receive(rctx)
		var serr *shard.SubscribeError
		if errors.As(err, &serr) {
			assert.NotContains(t, serr.Names, ch, "a refusal reported for a name that is subscribed: %v", serr)
			continue
		}
		require.NoError(t, err, "the message published to the subscribed channel")
		if m, ok := v.(redis.Message); ok {
			assert.Equal(t, ch, m.Channel)
			assert.Equal(t, "hello", string(m.Data))
			break
		}
	}
	assert.Equal(t, 2, sub.Stats().Channels, "both channels in the subscription")
}
