package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// numSub returns how many subscribers channel has on server s (cmd is
// NUMSUB or SHARDNUMSUB).
func numSub(t *testing.T, s *redistest.Server, cmd, channel string) int {
	t.Helper()
	out, err := s.Do("PUBSUB", cmd, channel)
	require.NoError(t, err)
	lines := strings.Split(out, "\n") // channel, count
	require.Len(t, lines, 2, "PUBSUB %s reply %q", cmd, out)
	n, err := strconv.Atoi(lines[1])
	require.NoError(t, err)
	return n
}

// collect receives n messages (other values are skipped) or fails after
// timeout; it returns what arrived.
func collect(ctx context.Context, sub *shard.Subscription, n int, timeout time.Duration) ([]redis.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out []redis.Message
	for len(out) < n {
		v, err := sub.Receive(ctx)
		if err != nil {
			return out, err
		}
		if m, ok := v.(redis.Message); ok {
			out = append(out, m)
		}
	}
	return out, nil
}

func TestSubscribeRingEveryMessageInOrder(t *testing.T) {
	c, servers := startRing(t, 3)
	ctx := context.Background()
	const channels, perChannel = 1000, 20
	names := make([]string, channels)
	for i := range names {
		names[i] = fmt.Sprintf("ring:ch:%d", i)
	}
	sub, err := c.Subscribe(ctx, names...)
	require.NoError(t, err)
	defer sub.Close()

	// Each channel is subscribed on the shard the ring places it on, and
	// only there; every shard has some.
	r, err := ring.New(ringConfig(servers).RingConfig())
	require.NoError(t, err)
	perShard := make([]int, len(servers))
	for _, name := range names[:60] {
		owner := r.Locate(name)
		for i, s := range servers {
			want := 0
			if i == owner {
				want = 1
			}
			assert.Equal(t, want, numSub(t, s, "NUMSUB", name), "%s on shard %d", name, i)
		}
	}
	for _, name := range names {
		perShard[r.Locate(name)]++
	}
	for i, n := range perShard {
		assert.Greater(t, n, 200, "channels on shard %d", i)
	}
	st := sub.Stats()
	assert.Equal(t, channels, st.Channels)
	assert.Equal(t, 3, st.Connections)

	// Publish through the client in pipelines: every PUBLISH reaches one
	// subscriber, so publisher and subscriber meet on the same shard.
	var pubErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for seq := 0; seq < perChannel; seq++ {
			p := c.Pipeline()
			for _, name := range names {
				p.Send("PUBLISH", name, strconv.Itoa(seq))
			}
			res, err := p.Exec(ctx)
			if err != nil {
				pubErr = err
				return
			}
			for i, r := range res {
				if n, err := redis.Int(r.Reply, r.Err); err != nil || n != 1 {
					pubErr = fmt.Errorf("PUBLISH %s reached %d subscribers: %v", names[i], n, err)
					return
				}
			}
		}
	}()
	msgs, err := collect(ctx, sub, channels*perChannel, 60*time.Second)
	wg.Wait()
	require.NoError(t, pubErr)
	require.NoError(t, err)
	require.Len(t, msgs, channels*perChannel)
	next := map[string]int{}
	for _, m := range msgs {
		require.Equal(t, strconv.Itoa(next[m.Channel]), string(m.Data), "order on %s", m.Channel)
		next[m.Channel]++
	}
	require.Len(t, next, channels)
	st = sub.Stats()
	assert.Zero(t, st.Dropped)
	assert.EqualValues(t, channels*perChannel, st.Delivered)
}

func TestPSubscribeRingListensOnEveryShard(t *testing.T) {
	c, servers := startRing(t, 3)
	ctx := context.Background()
	sub, err := c.PSubscribe(ctx, "pat:*")
	require.NoError(t, err)
	defer sub.Close()
	v, err := sub.Receive(ctx)
	require.NoError(t, err)
	assert.Equal(t, redis.Subscription{Kind: "psubscribe", Channel: "pat:*", Count: 1}, v)
	for i, s := range servers {
		n, err := s.Do("PUBSUB", "NUMPAT")
		require.NoError(t, err)
		assert.Equal(t, "1", n, "shard %d", i)
	}
	r, err := ring.New(ringConfig(servers).RingConfig())
	require.NoError(t, err)
	const n = 60
	for i := 0; i < n; i++ {
		got, err := redis.Int(c.Do(ctx, "PUBLISH", fmt.Sprintf("pat:%d", i), i))
		require.NoError(t, err)
		require.Equal(t, 1, got)
	}
	msgs, err := collect(ctx, sub, n, 10*time.Second)
	require.NoError(t, err)
	shards := map[int]bool{}
	for _, m := range msgs {
		assert.Equal(t, "pat:*", m.Pattern)
		shards[r.Locate(m.Channel)] = true
	}
	assert.Len(t, shards, 3, "messages from channels on every shard")
}

// TestSubscribeRingShardRestartResumes restarts a shard after 1.5 s down:
// its channels must deliver again within a second, both when the client's
// health checks see the shard come back (the subscription redials at once)
// and without health checks (the redial backoff, capped at 500 ms, bounds
// the wait).
func TestSubscribeRingShardRestartResumes(t *testing.T) {
	for _, health := range []bool{true, false} {
		name := "health-checks"
		if !health {
			name = "backoff-only"
		}
		t.Run(name, func(t *testing.T) { testRingShardRestart(t, health) })
	}
}

func testRingShardRestart(t *testing.T, health bool) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	if !health {
		cfg.Health.Interval = -1
	}
	c := newClient(t, cfg)
	ctx := context.Background()
	r, err := ring.New(ringConfig(servers).RingConfig())
	require.NoError(t, err)
	names := make([]string, 300)
	for i := range names {
		names[i] = fmt.Sprintf("restart:%d", i)
	}
	sub, err := c.Subscribe(ctx, names...)
	require.NoError(t, err)
	defer sub.Close()
	victim := 1
	var mine, other string
	for _, n := range names {
		if r.Locate(n) == victim && mine == "" {
			mine = n
		}
		if r.Locate(n) != victim && other == "" {
			other = n
		}
	}
	require.NotEmpty(t, mine)
	require.NotEmpty(t, other)

	require.NoError(t, servers[victim].Kill())
	time.Sleep(1500 * time.Millisecond) // long enough for the backoff to reach its cap
	// Other shards' channels keep working while it is down.
	_, err = c.Do(ctx, "PUBLISH", other, "while-down")
	require.NoError(t, err)
	require.NoError(t, servers[victim].Restart())
	restarted := time.Now()
	// A plain connection publishes until the subscription is back.
	pub, err := redis.Dial("tcp", servers[victim].Addr)
	require.NoError(t, err)
	defer pub.Close()
	var back time.Time
	for back.IsZero() {
		require.Less(t, time.Since(restarted), 10*time.Second, "the subscription never came back")
		n, err := redis.Int(pub.Do("PUBLISH", mine, "after"))
		require.NoError(t, err)
		if n == 1 {
			back = time.Now()
		}
		time.Sleep(5 * time.Millisecond)
	}
	gap := back.Sub(restarted)
	t.Logf("resubscribed %v after the restart", gap.Round(time.Millisecond))
	limit := time.Second
	if !health {
		// The next redial comes at most one backoff step (500 ms) after
		// the restart; allow a loaded machine as much again.
		limit = shard.DefaultMaxRedialBackoff + time.Second
	}
	assert.Less(t, gap, limit)
	msgs, err := collect(ctx, sub, 2, 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "while-down", string(msgs[0].Data))
	assert.Equal(t, mine, msgs[1].Channel)
	st := sub.Stats()
	assert.GreaterOrEqual(t, st.Lost, int64(1))
	assert.Positive(t, st.Resubscribed)
}

// TestSubscribeRingFollowsAutoEject: with auto-eject, a dead shard's
// channels rehash to the other shards like its keys, so PUBLISH through
// the client and the subscription keep meeting while it is out, and again
// once it is back.
func TestSubscribeRingFollowsAutoEject(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	c := newClient(t, cfg)
	ctx := context.Background()
	r, err := ring.New(cfg.RingConfig())
	require.NoError(t, err)
	var channel string
	for i := 0; channel == ""; i++ {
		if name := fmt.Sprintf("eject:%d", i); r.Locate(name) == 1 {
			channel = name
		}
	}
	sub, err := c.Subscribe(ctx, channel)
	require.NoError(t, err)
	defer sub.Close()
	_ = receiveWithin(t, sub, 5*time.Second)

	meet := func(what string) {
		t.Helper()
		waitFor(t, 10*time.Second, what, func() bool {
			n, err := redis.Int(c.Do(ctx, "PUBLISH", channel, what))
			return err == nil && n == 1
		})
		for {
			m := receiveWithin(t, sub, 5*time.Second).(redis.Message)
			if string(m.Data) == what {
				return
			}
		}
	}
	require.NoError(t, servers[1].Kill())
	meet("while ejected")
	assert.Equal(t, 0, numSub(t, servers[0], "NUMSUB", channel)+numSub(t, servers[2], "NUMSUB", channel)-1,
		"subscribed on exactly one of the remaining shards")
	require.NoError(t, servers[1].Restart())
	waitFor(t, 10*time.Second, "the shard to be restored", func() bool { return !c.Router().(*shard.RingRouter).Ejected(1) })
	meet("restored")
	assert.Equal(t, 1, numSub(t, servers[1], "NUMSUB", channel))
	waitFor(t, 5*time.Second, "the channel to be unsubscribed where it was while the shard was out", func() bool {
		return numSub(t, servers[0], "NUMSUB", channel)+numSub(t, servers[2], "NUMSUB", channel) == 0
	})
}

// TestPUnsubscribeRingConfirmsOncePerName: a ring pattern is subscribed
// on every shard, yet PSubscribe and PUnsubscribe each deliver one
// redis.Subscription for it, as for a channel on one shard.
func TestPUnsubscribeRingConfirmsOncePerName(t *testing.T) {
	c, _ := startRing(t, 3)
	ctx := context.Background()
	sub, err := c.PSubscribe(ctx, "pu1:*")
	require.NoError(t, err)
	defer sub.Close()
	var subs, unsubs []redis.Subscription
	subs = append(subs, receiveWithin(t, sub, 5*time.Second).(redis.Subscription))
	require.NoError(t, sub.PUnsubscribe(ctx, "pu1:*"))
	// Extra confirmations from the other shards come within a second.
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for {
		v, err := sub.Receive(rctx)
		if err != nil {
			break
		}
		if s, ok := v.(redis.Subscription); ok {
			if s.Kind == "psubscribe" {
				subs = append(subs, s)
			} else {
				unsubs = append(unsubs, s)
			}
		}
	}
	assert.Len(t, subs, 1)
	assert.Len(t, unsubs, 1, "one punsubscribe per name")
}
