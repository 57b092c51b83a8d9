package shard_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview9RouterSameServerTwoSpellings: a user's Router listing one
// server under two spellings of its address (localhost:P next to
// 127.0.0.1:P, 0.0.0.0:P next to 127.0.0.1:P) was accepted, while a ring's
// shards are refused for it. The client then kept two nodes, two pools,
// for the one server: ForEachShard ran on it twice (a DBSIZE summed over
// the shards counted every key twice) and Scan walked it twice. Validate
// and New now refuse it with ErrBadConfig naming both nodes.
func TestReview9RouterSameServerTwoSpellings(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	_, port, err := net.SplitHostPort(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The premise: every spelling reaches the one server.
	for _, host := range []string{"localhost", "0.0.0.0", "127.0.0.1"} {
		conn, err := redis.Dial("tcp", net.JoinHostPort(host, port))
		if err != nil {
			t.Fatalf("dial %s: %v", host, err)
		}
		if _, err := conn.Do("SET", "review9:router:"+host, "1"); err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}

	for _, p := range [][2]string{
		{net.JoinHostPort("localhost", port), srv.Addr},
		{net.JoinHostPort("0.0.0.0", port), srv.Addr},
		{srv.Addr, net.JoinHostPort("::ffff:127.0.0.1", port)},
	} {
		r := listRouter{{Name: "recent", Addr: p[0]}, {Name: "archive", Addr: p[1]}}
		cfg := shard.Config{Router: r, Health: shard.HealthOptions{Interval: -1}}
		err := cfg.Validate()
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("Validate with %s and %s = %v, want ErrBadConfig", p[0], p[1], err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, p[0]) || !strings.Contains(msg, p[1]) {
			t.Errorf("Validate with %s and %s: %q does not name both", p[0], p[1], msg)
		}
		c, err := shard.New(ctx, cfg)
		if err == nil {
			var visits atomic.Int64
			_ = c.ForEachShard(ctx, func(context.Context, shard.Node, redis.Conn) error {
				visits.Add(1)
				return nil
			})
			c.Close()
			t.Errorf("New with %s and %s: accepted, ForEachShard visited the one server %d times", p[0], p[1], visits.Load())
			continue
		}
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("New with %s and %s = %v, want ErrBadConfig", p[0], p[1], err)
		}
	}

}
