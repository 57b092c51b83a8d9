package shard_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// nextMessage returns the next message of sub (confirmations skipped), or
// an error when none comes within d.
func nextMessage(sub *shard.Subscription, d time.Duration) (redis.Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		v, err := sub.Receive(ctx)
		if err != nil {
			return redis.Message{}, err
		}
		if m, ok := v.(redis.Message); ok {
			return m, nil
		}
	}
}

// reachesAfterMove publishes through c on each of chans (PUBLISH, or
// SPUBLISH for those in sharded) until each has delivered one of its
// messages, within d: a name that moves is not subscribed at its new node
// at once. Messages of other channels are skipped.
func reachesAfterMove(t *testing.T, c *shard.Client, sub *shard.Subscription, sharded map[string]bool, d time.Duration, chans ...string) {
	t.Helper()
	pending := map[string]bool{}
	for _, ch := range chans {
		pending[ch] = true
	}
	deadline := time.Now().Add(d)
	for k := 0; len(pending) > 0; k++ {
		require.True(t, time.Now().Before(deadline), "nothing delivered on %v after the move", pending)
		for ch := range pending {
			cmd := "PUBLISH"
			if sharded[ch] {
				cmd = "SPUBLISH"
			}
			_, err := c.Do(context.Background(), cmd, ch, fmt.Sprintf("after %d", k))
			require.NoError(t, err)
		}
		for {
			m, err := nextMessage(sub, 200*time.Millisecond)
			if err != nil {
				break
			}
			if strings.HasPrefix(string(m.Data), "after ") {
				delete(pending, m.Channel)
			}
		}
	}
}

// A cluster client built with Config.Migration from a ring routes by the
// ring while its migration waits behind the fence, PUBLISH and SPUBLISH
// included. Its channels were placed on the cluster from the start: its
// own messages, and those of the processes still on the ring, reached no
// subscriber for the whole wait. They now follow the routing: on the ring
// while waiting, on the cluster from the switch on, in order.
func TestReview11PubSubClusterClientWaitingOnARing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := ringConfig(servers)
	to := intoCluster(t, from)
	f := from
	to.Migration = &shard.Migration{From: &f}
	c := newClient(t, to)
	info, ok := c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase)
	plain := newClient(t, from) // a process still on the ring

	tag := strconv.FormatUint(rand.Uint64(), 36)
	ch, sch := "r11cm:"+tag, "r11cms:"+tag
	sub, err := c.Subscribe(ctx, ch)
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.SSubscribe(ctx, sch))
	pat, pch := "r11cmp:"+tag+":*", "r11cmp:"+tag+":x"
	require.NoError(t, sub.PSubscribe(ctx, pat))

	// Waiting: the client's own PUBLISH goes to the ring, and so does the
	// ring process's.
	n, err := redis.Int(c.Do(ctx, "PUBLISH", ch, "own"))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the client's own PUBLISH while waiting reaches its subscription")
	n, err = redis.Int(plain.Do(ctx, "PUBLISH", ch, "ring"))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "a ring process's PUBLISH while waiting reaches the subscription")
	n, err = redis.Int(c.Do(ctx, "SPUBLISH", sch, "sown"))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the client's own SPUBLISH while waiting reaches its subscription")
	n, err = redis.Int(plain.Do(ctx, "SPUBLISH", sch, "sring"))
	require.NoError(t, err)
	assert.Equal(t, 1, n, "a ring process's SPUBLISH while waiting reaches the subscription")
	for i, p := range []*shard.Client{c, plain} {
		n, err = redis.Int(p.Do(ctx, "PUBLISH", pch, fmt.Sprintf("p%d", i)))
		require.NoError(t, err)
		assert.Equal(t, 1, n, "PUBLISH #%d while waiting reaches the pattern", i)
	}
	want := map[string]bool{"own": true, "ring": true, "sown": true, "sring": true, "p0": true, "p1": true}
	for len(want) > 0 {
		m, err := nextMessage(sub, 10*time.Second)
		require.NoError(t, err, "still expected: %v", want)
		require.True(t, want[string(m.Data)], "unexpected or repeated message %q on %q", m.Data, m.Channel)
		delete(want, string(m.Data))
	}

	// The switch, while the client publishes on both channels: from then
	// on the messages go to the cluster, and the subscription follows,
	// each channel in order.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	pubErr := make(chan error, 1)
	var published atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			for _, cmd := range [][2]string{{"PUBLISH", ch}, {"SPUBLISH", sch}} {
				if _, err := c.Do(ctx, cmd[0], cmd[1], strconv.Itoa(i)); err != nil {
					select {
					case pubErr <- fmt.Errorf("%s #%d: %w", cmd[0], i, err):
					default:
					}
					return
				}
			}
			published.Store(int64(i))
			time.Sleep(time.Millisecond)
		}
	}()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, c.ArmMigration())
	switched := int(published.Load()) // published after the switch from here on
	// Messages keep coming, in order per channel, until each channel has
	// delivered a run of those published after the switch.
	last := map[string]int{ch: -1, sch: -1}
	after := map[string]int{}
	for after[ch] < 50 || after[sch] < 50 {
		m, err := nextMessage(sub, 10*time.Second)
		require.NoError(t, err, "messages published after the switch received: %v", after)
		i, err := strconv.Atoi(string(m.Data))
		require.NoError(t, err)
		require.Contains(t, last, m.Channel)
		require.Greater(t, i, last[m.Channel], "channel %q out of order", m.Channel)
		last[m.Channel] = i
		if i > switched {
			after[m.Channel]++
		}
	}
	close(stop)
	wg.Wait()
	// next returns the next message that is not one of the publisher's
	// (those still buffered must keep their order too).
	next := func() redis.Message {
		t.Helper()
		for {
			m, err := nextMessage(sub, 10*time.Second)
			require.NoError(t, err)
			i, err := strconv.Atoi(string(m.Data))
			if err != nil || m.Pattern != "" {
				return m
			}
			require.Contains(t, last, m.Channel)
			require.Greater(t, i, last[m.Channel], "channel %q out of order", m.Channel)
			last[m.Channel] = i
		}
	}
	select {
	case err := <-pubErr:
		t.Fatal(err)
	default:
	}
	waitFor(t, 10*time.Second, "the channels left the ring", func() bool {
		total := 0
		for _, s := range servers {
			total += numSub(t, s, "NUMSUB", ch) + numSub(t, s, "SHARDNUMSUB", sch)
		}
		return total == 0
	})
	_, err = c.Do(ctx, "PUBLISH", ch, "end")
	require.NoError(t, err)
	m := next()
	assert.Equal(t, "end", string(m.Data))
	waitFor(t, 10*time.Second, "the pattern left the ring", func() bool {
		for _, s := range servers {
			if n, err := s.Do("PUBSUB", "NUMPAT"); err != nil || n != "0" {
				return false
			}
		}
		return true
	})
	reachesAfterMove(t, c, sub, nil, 10*time.Second, pch)
	require.NoError(t, c.FinishMigration())
}

// The same for a cluster client migrating from another cluster: while it
// waits, its names are on the old cluster, where its PUBLISH and SPUBLISH
// go and where the processes not switched yet publish.
func TestReview11PubSubClusterClientWaitingOnAnotherCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	oldCluster := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from := clusterConfig(oldCluster.Seeds()...)
	to := clusterConfig(clusterForTest(t).Seeds()...)
	f := from
	to.Migration = &shard.Migration{From: &f}
	c := newClient(t, to)
	info, ok := c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase)
	plain := newClient(t, from) // a process still on the old cluster

	tag := strconv.FormatUint(rand.Uint64(), 36)
	ch, sch, pat, pch := "r11cc:"+tag, "r11ccs:"+tag, "r11ccp:"+tag+":*", "r11ccp:"+tag+":x"
	sub, err := c.Subscribe(ctx, ch)
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.SSubscribe(ctx, sch))
	require.NoError(t, sub.PSubscribe(ctx, pat))

	want := map[string]bool{}
	for i, p := range []*shard.Client{c, plain} {
		for _, cmd := range [][2]string{{"PUBLISH", ch}, {"SPUBLISH", sch}, {"PUBLISH", pch}} {
			data := fmt.Sprintf("%s %s #%d", cmd[0], cmd[1], i)
			_, err := p.Do(ctx, cmd[0], cmd[1], data)
			require.NoError(t, err)
			want[data] = true
		}
	}
	for len(want) > 0 {
		m, err := nextMessage(sub, 10*time.Second)
		require.NoError(t, err, "while waiting, still expected: %v", want)
		require.True(t, want[string(m.Data)], "unexpected or repeated message %q on %q", m.Data, m.Channel)
		delete(want, string(m.Data))
	}

	require.NoError(t, c.ArmMigration())
	waitFor(t, 10*time.Second, "the names left the old cluster", func() bool {
		for _, s := range oldCluster.Masters() {
			if numSub(t, s, "NUMSUB", ch)+numSub(t, s, "SHARDNUMSUB", sch) != 0 {
				return false
			}
			if n, err := s.Do("PUBSUB", "NUMPAT"); err != nil || n != "0" {
				return false
			}
		}
		return true
	})
	reachesAfterMove(t, c, sub, map[string]bool{sch: true}, 10*time.Second, ch, sch, pch)
	require.NoError(t, c.FinishMigration())
}
