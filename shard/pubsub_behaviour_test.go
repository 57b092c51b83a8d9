package shard_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// receiveWithin receives one value or fails the test.
func receiveWithin(t *testing.T, sub *shard.Subscription, d time.Duration) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	v, err := sub.Receive(ctx)
	require.NoError(t, err)
	return v
}

func TestSubscriptionLifecycle(t *testing.T) {
	c, _ := startRing(t, 3)
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "life:a", "life:b"))
	require.NoError(t, sub.PSubscribe(ctx, "life:p:*"))
	require.NoError(t, sub.SSubscribe(ctx, "life:s"))
	var subs []redis.Subscription
	for range 4 {
		subs = append(subs, receiveWithin(t, sub, 5*time.Second).(redis.Subscription))
	}
	assert.ElementsMatch(t, []redis.Subscription{
		{Kind: "subscribe", Channel: "life:a", Count: 2}, {Kind: "subscribe", Channel: "life:b", Count: 2},
		{Kind: "psubscribe", Channel: "life:p:*", Count: 3}, {Kind: "ssubscribe", Channel: "life:s", Count: 4},
	}, subs)
	// Subscribing again to a name already there delivers nothing new.
	require.NoError(t, sub.Subscribe(ctx, "life:a"))

	for _, pub := range [][]any{{"PUBLISH", "life:a", "1"}, {"PUBLISH", "life:p:x", "2"}, {"SPUBLISH", "life:s", "3"}} {
		n, err := redis.Int(c.Do(ctx, pub[0].(string), pub[1:]...))
		require.NoError(t, err)
		require.Equal(t, 1, n, "%v", pub)
	}
	// The three channels live on different connections: their messages
	// interleave in arrival order, not in publishing order (docs/pubsub.md).
	var msgs []any
	for range 3 {
		msgs = append(msgs, receiveWithin(t, sub, 5*time.Second))
	}
	assert.ElementsMatch(t, []any{
		redis.Message{Channel: "life:a", Data: []byte("1")},
		redis.Message{Pattern: "life:p:*", Channel: "life:p:x", Data: []byte("2")},
		redis.Message{Channel: "life:s", Data: []byte("3")},
	}, msgs)

	require.NoError(t, sub.Unsubscribe(ctx, "life:a"))
	assert.Equal(t, redis.Subscription{Kind: "unsubscribe", Channel: "life:a", Count: 3}, receiveWithin(t, sub, 5*time.Second))
	n, err := redis.Int(c.Do(ctx, "PUBLISH", "life:a", "gone"))
	require.NoError(t, err)
	assert.Zero(t, n)

	// Ping answers once per connection (three shards: the pattern is on all).
	require.NoError(t, sub.Ping(ctx, "hello"))
	for range 3 {
		assert.Equal(t, redis.Pong{Data: "hello"}, receiveWithin(t, sub, 5*time.Second))
	}

	// Channel delivers messages only.
	ch := sub.Channel()
	_, err = c.Do(ctx, "PUBLISH", "life:b", "via-channel")
	require.NoError(t, err)
	select {
	case m := <-ch:
		assert.Equal(t, "via-channel", string(m.Data))
	case <-time.After(5 * time.Second):
		t.Fatal("no message on the channel")
	}
	require.NoError(t, sub.Close())
	_, open := <-ch
	assert.False(t, open, "Close closes the channel")
	_, err = sub.Receive(ctx)
	assert.ErrorIs(t, err, shard.ErrSubscriptionClosed)
	assert.ErrorIs(t, sub.Subscribe(ctx, "x"), shard.ErrSubscriptionClosed)
	assert.NoError(t, sub.Close(), "Close is idempotent")

	// Bad calls.
	_, err = c.Subscribe(ctx)
	assert.ErrorIs(t, err, shard.ErrBadCommand)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.Subscribe(cctx, "x")
	assert.ErrorIs(t, err, context.Canceled)
}

func TestSubscriptionHealthPingDetectsHungShard(t *testing.T) {
	c, servers := startRing(t, 1)
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: 100 * time.Millisecond, PingTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "hung"))
	// Idle but alive: health PINGs keep it, and the application sees no pong.
	time.Sleep(500 * time.Millisecond)
	assert.Zero(t, sub.Stats().Lost)
	_ = receiveWithin(t, sub, time.Second) // the subscribe confirmation
	rctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = sub.Receive(rctx)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "health pongs are not delivered")

	require.NoError(t, servers[0].Pause())
	paused := time.Now()
	waitFor(t, 5*time.Second, "the hung connection to be dropped", func() bool { return sub.Stats().Lost > 0 })
	detected := time.Since(paused)
	t.Logf("hung shard detected after %v (PingInterval 100ms + PingTimeout 200ms)", detected.Round(time.Millisecond))
	assert.Less(t, detected, 2*time.Second)
	require.NoError(t, servers[0].Resume())
	// A PUBLISH that counts one subscriber may still reach the dropped
	// connection (the server, paused, has not read its close yet): publish
	// until a message reaches the subscription.
	waitFor(t, 10*time.Second, "a message through the subscription that came back", func() bool {
		if _, err := c.Do(ctx, "PUBLISH", "hung", "back"); err != nil {
			return false
		}
		rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		for {
			v, err := sub.Receive(rctx)
			if err != nil {
				return false
			}
			if m, ok := v.(redis.Message); ok {
				return m.Channel == "hung" && string(m.Data) == "back"
			}
		}
	})
}

func TestSubscriptionSlowConsumerDropsAndCounts(t *testing.T) {
	c, _ := startRing(t, 1)
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{BufferSize: 10})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "slow"))
	p := c.Pipeline()
	for i := range 100 {
		p.Send("PUBLISH", "slow", i)
	}
	_, err = p.Exec(ctx)
	require.NoError(t, err)
	waitFor(t, 5*time.Second, "100 messages read", func() bool { return sub.Stats().Received == 100 })
	st := sub.Stats()
	assert.EqualValues(t, 90, st.Dropped)
	assert.Equal(t, 10, st.Buffered)
	// The oldest ten are kept, in order; the confirmation is never dropped.
	assert.IsType(t, redis.Subscription{}, receiveWithin(t, sub, time.Second))
	for i := range 10 {
		m := receiveWithin(t, sub, time.Second).(redis.Message)
		assert.Equal(t, fmt.Sprint(i), string(m.Data))
	}
	assert.EqualValues(t, 10, sub.Stats().Delivered)
}

func TestSubscriptionACLRefusal(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{Users: []redistest.User{{Name: "app", Password: "s3cret-pw", Rules: "~* &ok:* +@all"}}})
	cfg := ringConfig([]*redistest.Server{srv})
	cfg.Pool.Username, cfg.Pool.Password = "app", "s3cret-pw"
	c := newClient(t, cfg)
	ctx := context.Background()
	sub, err := c.Subscribe(ctx, "ok:1")
	require.NoError(t, err, "ACL credentials are used by subscription connections")
	defer sub.Close()
	err = sub.Subscribe(ctx, "forbidden")
	require.Error(t, err)
	var se *shard.SubscribeError
	require.ErrorAs(t, err, &se)
	var re redis.Error
	require.ErrorAs(t, err, &re)
	assert.True(t, strings.HasPrefix(string(re), "NOPERM"), "%v", re)
	assert.Equal(t, []string{"forbidden"}, se.Names)
	assert.NotContains(t, err.Error(), "s3cret-pw")
	assert.Equal(t, 1, sub.Stats().Channels, "the refused name left the subscription")
	// The refusal is also delivered in the stream, after the first confirmation.
	assert.IsType(t, redis.Subscription{}, receiveWithin(t, sub, time.Second))
	_, err = sub.Receive(ctx)
	require.ErrorAs(t, err, &se)
	// The rest of the subscription works on.
	n, err := redis.Int(c.Do(ctx, "PUBLISH", "ok:1", "x"))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, "x", string(receiveWithin(t, sub, time.Second).(redis.Message).Data))

	// Wrong credentials: a clear error, no secret in it.
	cfg.Pool.Password = "wrong-pw"
	bad := newClient(t, cfg)
	_, err = bad.Subscribe(ctx, "ok:1")
	require.Error(t, err)
	var ae *pool.AuthError
	assert.ErrorAs(t, err, &ae)
	assert.NotContains(t, err.Error(), "wrong-pw")
}

func TestSubscriptionCloseLeavesNothing(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := ringConfig(servers)
	cfg.Pool.ClientName = "subleak"
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	sub, err := c.PSubscribe(ctx, "leak:*")
	require.NoError(t, err)
	require.NoError(t, sub.Subscribe(ctx, "leak:1", "leak:2", "leak:3"))
	_ = sub.Channel()
	// The client's health checks have pooled connections of the same
	// name: count those in subscribe mode.
	assert.Equal(t, 3, subscribersNamed(t, servers, "subleak"))
	require.NoError(t, sub.Close())
	waitFor(t, 3*time.Second, "every subscription connection to close", func() bool {
		return subscribersNamed(t, servers, "subleak") == 0
	})
	// No subscription connection ever went into a pool.
	_, err = c.Do(ctx, "SET", "leak:k", "v")
	require.NoError(t, err)
	for _, st := range c.Stats().Nodes {
		assert.LessOrEqual(t, st.Pool.Active, 1, "%s", st.Node)
	}
}

// subscribersNamed counts the connections named name that are in
// subscribe mode (any sub, psub or ssub count above zero) on each server.
func subscribersNamed(t *testing.T, servers []*redistest.Server, name string) int {
	t.Helper()
	n := 0
	for _, s := range servers {
		list, err := s.Do("CLIENT", "LIST")
		require.NoError(t, err)
		for _, line := range strings.Split(list, "\n") {
			if !strings.Contains(line, " name="+name+" ") {
				continue
			}
			for _, f := range strings.Fields(line) {
				k, v, _ := strings.Cut(f, "=")
				if (k == "sub" || k == "psub" || k == "ssub") && v != "0" {
					n++
					break
				}
			}
		}
	}
	return n
}

func TestSubscribeKeyspaceRing(t *testing.T) {
	c, servers := startRing(t, 3)
	ctx := context.Background()
	ks, err := c.SubscribeKeyspace(ctx, shard.KeyspaceOptions{Enable: "KEA"})
	require.NoError(t, err)
	defer ks.Close()
	r, err := ring.New(ringConfig(servers).RingConfig())
	require.NoError(t, err)
	keys := map[int]string{}
	for i := 0; len(keys) < 3; i++ {
		k := fmt.Sprintf("ks:%d", i)
		if _, ok := keys[r.Locate(k)]; !ok {
			keys[r.Locate(k)] = k
		}
	}
	for _, k := range keys {
		_, err := c.Do(ctx, "SET", k, "v")
		require.NoError(t, err)
	}
	seen := map[string]map[string]bool{} // key -> "keyspace"/"keyevent"
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for len(seen) < 3 || !(len(seen[keys[0]]) == 2 && len(seen[keys[1]]) == 2 && len(seen[keys[2]]) == 2) {
		v, err := ks.Receive(rctx)
		require.NoError(t, err, "seen %v", seen)
		m, ok := v.(redis.Message)
		if !ok {
			continue
		}
		ev, ok := shard.ParseKeyspaceEvent(m)
		require.True(t, ok, "%+v", m)
		assert.Equal(t, "set", ev.Event)
		if seen[ev.Key] == nil {
			seen[ev.Key] = map[string]bool{}
		}
		seen[ev.Key][m.Pattern] = true
	}
}

// fakeServer is a byte-level Redis stand-in on loopback: for each
// connection it answers the commands it reads with the next scripted
// reply (raw RESP), then writes the connection's trailing pushes.
type fakeServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns int
	wg    sync.WaitGroup
}

func startFake(t *testing.T, script func(conn int, cmd []string) string) *fakeServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeServer{ln: ln}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns++
			n := f.conns
			f.mu.Unlock()
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer nc.Close()
				rd := bufio.NewReader(nc)
				for {
					cmd, err := readCommand(rd)
					if err != nil {
						return
					}
					if _, err := nc.Write([]byte(script(n, cmd))); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); f.wg.Wait() })
	return f
}

// addr is the fake server's address.
func (f *fakeServer) addr() string { return f.ln.Addr().String() }

// client returns a ring client over the fake server alone, without health
// checks, closed when the test ends.
func (f *fakeServer) client(t *testing.T) *shard.Client {
	t.Helper()
	return newClient(t, shard.Config{
		Shards: []ring.Shard{{Addr: f.addr(), Weight: 1}},
		Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second},
		Health: shard.HealthOptions{Interval: -1},
	})
}

// subscribedReply is the confirmation of a SUBSCRIBE of channel, the
// first name of its connection.
func subscribedReply(channel string) string {
	return "*3\r\n$9\r\nsubscribe\r\n$" + fmt.Sprint(len(channel)) + "\r\n" + channel + "\r\n:1\r\n"
}

// pongReply is the reply of a PING with msg on a connection in subscribe
// mode.
func pongReply(msg string) string {
	return "*2\r\n$4\r\npong\r\n$" + fmt.Sprint(len(msg)) + "\r\n" + msg + "\r\n"
}

// readCommand reads one RESP array of bulk strings.
func readCommand(rd *bufio.Reader) ([]string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	var n int
	if _, err := fmt.Sscanf(line, "*%d\r\n", &n); err != nil {
		return nil, err
	}
	out := make([]string, n)
	for i := range out {
		if _, err := rd.ReadString('\n'); err != nil {
			return nil, err
		}
		arg, err := rd.ReadString('\n')
		if err != nil {
			return nil, err
		}
		out[i] = strings.TrimSuffix(arg, "\r\n")
	}
	return out, nil
}

func TestSubscriptionOddRepliesFromAFakeServer(t *testing.T) {
	f := startFake(t, func(conn int, cmd []string) string {
		switch {
		case cmd[0] == "SUBSCRIBE" && cmd[1] == "refused":
			return "-ERR odd refusal\r\n"
		case cmd[0] == "SUBSCRIBE" && conn == 1:
			// A confirmation, then a push type no server sends.
			return subscribedReply(cmd[1]) + "*2\r\n$9\r\ninvalidat\r\n$1\r\nx\r\n"
		case cmd[0] == "SUBSCRIBE":
			return subscribedReply(cmd[1])
		case cmd[0] == "PING":
			return pongReply(cmd[1])
		}
		return "-ERR unexpected\r\n"
	})
	c := f.client(t)
	ctx := context.Background()
	sub, err := c.Subscribe(ctx, "odd")
	require.NoError(t, err)
	defer sub.Close()
	assert.IsType(t, redis.Subscription{}, receiveWithin(t, sub, 5*time.Second))
	// The unknown push: reported, the connection dropped and dialled again.
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = sub.Receive(rctx)
	cancel()
	require.ErrorIs(t, err, shard.ErrPubSubReply)
	waitFor(t, 5*time.Second, "a second connection", func() bool { return sub.Stats().Dials >= 2 && sub.Stats().Resubscribed >= 1 })
	assert.EqualValues(t, 1, sub.Stats().Lost)

	// An error reply in subscribe mode answers the command it belongs to.
	err = sub.Subscribe(ctx, "refused")
	var se *shard.SubscribeError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "SUBSCRIBE", se.Command)
	assert.Equal(t, redis.Error("ERR odd refusal"), se.Err)
	assert.True(t, strings.HasPrefix(err.Error(), "shardis: "), err.Error())
	assert.False(t, errors.Is(err, shard.ErrPubSubReply))
}

func TestSubscriptionOverTLS(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{TLS: true})
	cfg := ringConfig(servers)
	cfg.Pool.TLSConfig = servers[0].TLS.ClientConfig()
	// A TLS handshake under -race on a loaded machine can take more than
	// ringConfig's second.
	cfg.Pool.DialTimeout, cfg.Pool.ReadTimeout, cfg.Pool.WriteTimeout = 5*time.Second, 5*time.Second, 5*time.Second
	c := newClient(t, cfg)
	sub, err := c.PSubscribe(ctx, "tls:*")
	require.NoError(t, err, "both shards confirmed over TLS")
	defer sub.Close()
	_ = receiveWithin(t, sub, 5*time.Second)
	n, err := redis.Int(c.Do(ctx, "PUBLISH", "tls:1", "secret"))
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Equal(t, "secret", string(receiveWithin(t, sub, 5*time.Second).(redis.Message).Data))

	// Without TLS: a clear node error, and no subscription.
	plain := newClient(t, ringConfig(servers))
	_, err = plain.PSubscribe(ctx, "tls:*")
	var ne *shard.NodeError
	assert.ErrorAs(t, err, &ne)
}

// TestClientCloseClosesSubscriptions: closing the client ends the
// subscriptions it made (their connections, goroutines and Receive), and
// a subscription asked for afterwards is refused.
func TestClientCloseClosesSubscriptions(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cfg := ringConfig(servers)
	cfg.Pool.ClientName = "subclose"
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	ctx := context.Background()
	sub, err := c.PSubscribe(ctx, "close:*")
	require.NoError(t, err)
	require.NoError(t, sub.Subscribe(ctx, "close:1", "close:2"))
	require.Equal(t, 3, subscribersNamed(t, servers, "subclose"))

	received := make(chan error, 1)
	go func() {
		for {
			if _, err := sub.Receive(ctx); err != nil {
				received <- err
				return
			}
		}
	}()
	require.NoError(t, c.Close())
	select {
	case err := <-received:
		assert.ErrorIs(t, err, shard.ErrSubscriptionClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("Receive still blocked 10 s after the client was closed")
	}
	waitFor(t, 5*time.Second, "every subscription connection to close", func() bool {
		return subscribersNamed(t, servers, "subclose") == 0
	})
	_, err = c.Subscribe(ctx, "late")
	assert.ErrorIs(t, err, shard.ErrClosed)
	assert.NoError(t, sub.Close(), "closing again is harmless")
}
