package shard_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
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

// A cluster client built with Config.Migration subscribes its shard
// channels on the old cluster while it waits. A slot moved there: the
// old owner dropped the channel, the SSUBSCRIBE sent to it again (the
// old table, never refreshed, still named it) met a MOVED, and that
// MOVED was written into the client's own (new) cluster table, which
// then sent the slot's commands to a node of the old cluster; the
// channel was sent to the stale owner again and again, each time meeting
// the same MOVED, and never delivered again while the client waited.
func TestReview11PubSubMovedOnTheOldClusterStaysThere(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	oldCluster := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	c, from := waitingOn(t, oldCluster, nil)
	plain := newClient(t, from) // a process still on the old cluster
	own := ownRouter(t, c)
	oldAddrs := masterAddrs(oldCluster)

	tag := strconv.FormatUint(rand.Uint64(), 36)
	sch := "r11oldmoved:{" + tag + "}"
	sub, err := c.SSubscribe(ctx, sch)
	require.NoError(t, err)
	defer sub.Close()
	t.Cleanup(func() { t.Logf("shard channels moved: %d", sub.Stats().Moved) })
	n, err := redis.Int(plain.Do(ctx, "SPUBLISH", sch, "before"))
	require.NoError(t, err)
	require.Equal(t, 1, n, "the shard channel is on the old cluster while waiting")
	m, err := nextMessage(sub, 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, "before", string(m.Data))

	owner, dst := routedOwner(t, oldCluster, plain, sch)
	_, err = redistest.MoveSlot(ctx, cluster.Slot(sch), owner, dst, oldCluster.Masters(), redistest.SlotMoveOptions{})
	require.NoError(t, err)

	// The subscription follows the slot on the old cluster, and the
	// client's own table keeps pointing at the new cluster.
	waitFor(t, 10*time.Second, "the shard channel at the slot's new owner on the old cluster", func() bool {
		return numSub(t, dst, "SHARDNUMSUB", sch) == 1
	})
	movedBefore := sub.Stats().Moved
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		nd, err := own.Route(sch)
		require.NoError(t, err)
		require.False(t, oldAddrs[nd.Addr], "the client's own table routes %q to %s, a node of the old cluster", sch, nd.Addr)
	}
	assert.LessOrEqual(t, sub.Stats().Moved-movedBefore, int64(0), "the shard channel kept meeting MOVED")
	n, err = redis.Int(plain.Do(ctx, "SPUBLISH", sch, "after"))
	require.NoError(t, err)
	require.Equal(t, 1, n, "SPUBLISH on the old cluster after the move reaches the subscriber")
	m, err = nextMessage(sub, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "after", string(m.Data))
}

// A channel moves off a node that is alive but slow to reach (a
// throttled link, about 8 MB/s here), with a backlog for the subscriber:
// 55,000 messages of another channel (29 MB, under the server's default
// 32 MB output buffer limit) queued before the move, then message 0 of
// the moving channel, then the move's unsubscribe confirmation. The new
// node's connection held the channel's messages for PingInterval +
// PingTimeout (2 s here) from the start of the hold, not from the old
// node's last message: the hold ran out while the old node was still
// delivering, and the messages published after the move came before
// message 0.
func TestReview11PubSubHoldOutlastsALiveBacklog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	link := startSlowLink(t, servers[0].Addr, 8<<10, time.Millisecond)
	recent := shard.Node{Name: "recent", Addr: link}
	archive := shard.Node{Name: "archive", Addr: servers[1].Addr}
	base := ringConfig(servers[:1])
	from := shard.Config{Router: yearRouter{recent: recent, archive: recent}, Pool: base.Pool, Health: base.Health}
	to := shard.Config{Router: yearRouter{recent: recent, archive: archive}, Pool: base.Pool, Health: base.Health}
	c := newClient(t, from)

	const moving, busy, flood = "y2020:seq", "y2024:busy", 55000
	sub, err := c.NewSubscription(shard.SubscriptionOptions{BufferSize: 4 * flood})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, moving, busy))

	// The backlog: queued on the old node while the move starts.
	floodBeforeMove(t, servers[0].Addr, "PUBLISH", busy, moving, flood)
	start := time.Now()
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())
	reached, seq := publishUntilReached(ctx, t, c, "PUBLISH", moving, "the subscriber")
	require.NoError(t, sub.Unsubscribe(ctx, moving))

	got := receiveSeqs(ctx, t, sub, busy, flood, "unsubscribe", moving, nil)
	t.Logf("published 0..%d, %v reached a subscriber, delivered %v, all within %v", seq, reached, fmt.Sprint(got), time.Since(start))
	assert.Equal(t, reached, got, "every message that reached a subscriber, in publishing order, once")
	st := sub.Stats()
	assert.Zero(t, st.Lost, "the old node's connection was taken for dead")
	assert.Zero(t, st.Dropped)
}

// startSlowLink starts a loopback TCP proxy to backend that passes what
// the backend sends on at most chunk bytes per pause (what clients send
// goes through as it comes), and returns its address. It stops when the
// test ends.
func startSlowLink(t *testing.T, backend string, chunk int, pause time.Duration) string {
	t.Helper()
	return startLoopbackFront(t, backend, func(c, b net.Conn, _ <-chan struct{}) (up, down func()) {
		up = func() {
			_, _ = io.Copy(b, c)
			b.Close()
		}
		down = func() {
			buf := make([]byte, chunk)
			for {
				n, err := b.Read(buf)
				if n > 0 {
					if _, werr := c.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
				time.Sleep(pause)
			}
			c.Close()
		}
		return up, down
	})
}
