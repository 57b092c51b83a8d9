package shard_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// review2RecvQueue returns the bytes waiting unread in the kernel on the
// server's end of the TCP connection from clientPort to serverPort: what
// the client sent that a paused server has not read.
func review2RecvQueue(t *testing.T, serverPort, clientPort int) int {
	t.Helper()
	raw, err := os.ReadFile("/proc/net/tcp")
	require.NoError(t, err)
	local := fmt.Sprintf(":%04X", serverPort)
	remote := fmt.Sprintf(":%04X", clientPort)
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasSuffix(f[1], local) || !strings.HasSuffix(f[2], remote) {
			continue
		}
		_, rx, _ := strings.Cut(f[4], ":")
		n, err := strconv.ParseInt(rx, 16, 64)
		require.NoError(t, err)
		return int(n)
	}
	t.Fatalf("no socket %d <- %d in /proc/net/tcp", serverPort, clientPort)
	return 0
}

// review2SubscriberPort returns the client port of the one connection in
// subscribe mode on s.
func review2SubscriberPort(t *testing.T, s *redistest.Server) int {
	t.Helper()
	list, err := s.Do("CLIENT", "LIST")
	require.NoError(t, err)
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(line, " sub=1 ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if addr, ok := strings.CutPrefix(f, "addr="); ok {
				_, port, _ := strings.Cut(addr, ":")
				n, err := strconv.Atoi(port)
				require.NoError(t, err)
				return n
			}
		}
	}
	t.Fatalf("no subscriber on %s: %s", s.Addr, list)
	return 0
}

// Subscribe, Unsubscribe and Subscribe again of one channel, all sent
// before the node answers the first: the confirmation of the first
// SUBSCRIBE must not be taken for the last one's. The application sees
// the unsubscribe, then the subscribe (the state the node ends in), and
// the channel delivers.
func TestReview2PubSubResubscribeBeforeFirstConfirmation(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("needs /proc/net/tcp")
	}
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.Interval = -1 // no other traffic on the paused server
	c := newClient(t, cfg)
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: time.Minute, PingTimeout: time.Minute})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, "r2race:keep"))
	receiveWithin(t, sub, 5*time.Second)

	srv := servers[0]
	_, sp, _ := strings.Cut(srv.Addr, ":")
	serverPort, err := strconv.Atoi(sp)
	require.NoError(t, err)
	clientPort := review2SubscriberPort(t, srv)
	require.Zero(t, review2RecvQueue(t, serverPort, clientPort))

	require.NoError(t, srv.Pause())
	resumed := false
	defer func() {
		if !resumed {
			_ = srv.Resume()
		}
	}()
	// 1. SUBSCRIBE a, sent; its caller gives up waiting.
	ctx1, cancel1 := context.WithCancel(ctx)
	first := make(chan error, 1)
	go func() { first <- sub.Subscribe(ctx1, "r2race:a") }()
	waitFor(t, 10*time.Second, "the first SUBSCRIBE sent", func() bool {
		return review2RecvQueue(t, serverPort, clientPort) > 0
	})
	cancel1()
	<-first
	// 2. UNSUBSCRIBE a.
	queued := review2RecvQueue(t, serverPort, clientPort)
	require.NoError(t, sub.Unsubscribe(ctx, "r2race:a"))
	waitFor(t, 10*time.Second, "the UNSUBSCRIBE sent", func() bool {
		return review2RecvQueue(t, serverPort, clientPort) > queued
	})
	// 3. SUBSCRIBE a again.
	queued = review2RecvQueue(t, serverPort, clientPort)
	again := make(chan error, 1)
	go func() { again <- sub.Subscribe(ctx, "r2race:a") }()
	waitFor(t, 10*time.Second, "the second SUBSCRIBE sent", func() bool {
		return review2RecvQueue(t, serverPort, clientPort) > queued
	})
	require.NoError(t, srv.Resume())
	resumed = true
	select {
	case err := <-again:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the second Subscribe never returned")
	}

	var kinds []string
	for range 2 {
		v := receiveWithin(t, sub, 5*time.Second)
		m, ok := v.(redis.Subscription)
		require.True(t, ok, "%#v", v)
		require.Equal(t, "r2race:a", m.Channel)
		kinds = append(kinds, m.Kind)
	}
	assert.Equal(t, []string{"unsubscribe", "subscribe"}, kinds, "the last event is the state the node is in")
	n, err := redis.Int(c.Do(ctx, "PUBLISH", "r2race:a", "x"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	v := receiveWithin(t, sub, 5*time.Second)
	assert.Equal(t, redis.Message{Channel: "r2race:a", Data: []byte("x")}, v)
}
