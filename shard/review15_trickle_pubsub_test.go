package shard_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A node that trickles some of a subscription connection's replies (a
// byte every 200 ms: seconds for each) does not hold the subscription:
// with PingInterval 200 ms and PingTimeout 300 ms, a trickled SUBSCRIBE
// confirmation ends Subscribe, a trickled message and a trickled answer
// to the health PING take the connection for lost, within
// PingInterval+PingTimeout and a margin.
func TestReview15TrickledSubscriptionRepliesAreBounded(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	const (
		pingInterval = 200 * time.Millisecond
		pingTimeout  = 300 * time.Millisecond
		bound        = 2 * time.Second // a trickled reply takes 6 s or more
	)
	isMessage := func(cmd string, reply []byte) bool {
		return cmd == "" && bytes.HasPrefix(reply, []byte("*3\r\n$7\r\nmessage\r\n"))
	}
	for _, tc := range []struct {
		name  string
		match func(cmd string, reply []byte) bool
	}{
		{"confirmation", func(cmd string, _ []byte) bool { return cmd == "SUBSCRIBE" }},
		{"message", isMessage},
		{"health PING", func(cmd string, _ []byte) bool { return cmd == "PING" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			px := redistest.StartTrickleProxy(t, srv.Addr, 200*time.Millisecond, tc.match)
			c := newClient(t, shard.Config{
				Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: pingTimeout, WriteTimeout: time.Second},
				Health: shard.HealthOptions{Interval: -1},
				Shards: []ring.Shard{{Name: "s0", Addr: px.Addr, Weight: 1}},
			})
			s, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: pingInterval, PingTimeout: pingTimeout})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			err = s.Subscribe(ctx, "review15:trickle")
			took := time.Since(start)
			if tc.name == "confirmation" {
				t.Logf("Subscribe: %v after %v", err, took)
				if err == nil || ctx.Err() != nil || took > bound {
					t.Errorf("Subscribe with a trickled confirmation: %v after %v, want an error within %v", err, took, bound)
				}
				return
			}
			if err != nil {
				t.Fatalf("Subscribe: %v", err)
			}
			start = time.Now()
			if tc.name == "message" {
				conn, err := redis.Dial("tcp", srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				if _, err := conn.Do("PUBLISH", "review15:trickle", "hello"); err != nil {
					t.Fatal(err)
				}
			}
			if !waitUntil(bound, func() bool { return s.Stats().Lost > 0 }) {
				t.Errorf("the connection trickling a %s is not lost %v after", tc.name, time.Since(start))
			}
			t.Logf("lost after %v", time.Since(start))
		})
	}
}
