package shard_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview9PortWithLeadingZerosIsTheSameServer: a dial reaches port P
// through 127.0.0.1:0P, so a ring refuses a port with leading zeros (one
// server would pass for two shards). A Router's nodes, seeds and
// Migration.Addrs accepted it, and the same-server check compared ports
// as written: a Router listing 127.0.0.1:0P and 127.0.0.1:P (or
// localhost:0P) got two nodes for the one server, visited twice by
// ForEachShard and Scan. Every address now follows the ring's rule, and
// ports are compared by number.
func TestReview9PortWithLeadingZerosIsTheSameServer(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	_, port, err := net.SplitHostPort(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	padded := "0" + port
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// The premise: the padded port reaches the server.
	conn, err := redis.Dial("tcp", net.JoinHostPort("127.0.0.1", padded))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Do("SET", "review9:padded", "1"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	direct, err := redis.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if v, err := redis.String(direct.Do("GET", "review9:padded")); err != nil || v != "1" {
		t.Fatalf("GET through the plain port = %q, %v: the padded port is not this server", v, err)
	}

	for _, p := range [][2]string{
		{net.JoinHostPort("127.0.0.1", padded), srv.Addr},
		{net.JoinHostPort("localhost", padded), srv.Addr},
		{net.JoinHostPort("127.0.0.1", "00"+port), net.JoinHostPort("127.0.0.1", padded)},
	} {
		cfg := shard.Config{Shards: []ring.Shard{{Addr: p[0], Weight: 1, Name: "a"}, {Addr: p[1], Weight: 1, Name: "b"}}, Health: shard.HealthOptions{Interval: -1}}
		c, err := shard.New(ctx, cfg)
		if err == nil {
			c.Close()
			t.Errorf("New with shards %s and %s: accepted, want an error", p[0], p[1])
		} else if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("New with shards %s and %s = %v, want ErrBadConfig", p[0], p[1], err)
		}
		if _, err := ring.ParseShards(p[0] + "," + p[1]); !errors.Is(err, ring.ErrBadShardList) {
			t.Errorf("ring.ParseShards(%s,%s) = %v, want ring.ErrBadShardList", p[0], p[1], err)
		}
		r := listRouter{{Name: "a", Addr: p[0]}, {Name: "b", Addr: p[1]}}
		if err := (shard.Config{Router: r}).Validate(); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("Validate with Router nodes %s and %s = %v, want ErrBadConfig", p[0], p[1], err)
		}
		if err := (shard.Config{Mode: shard.ModeCluster, Seeds: []string{p[0]}}).Validate(); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("Validate with seed %s = %v, want ErrBadConfig", p[0], err)
		}
		if _, err := shard.ParseURL("redis-cluster://" + p[0]); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseURL with seed %s = %v, want ErrBadConfig", p[0], err)
		}
		mig := shard.Config{Shards: []ring.Shard{{Addr: srv.Addr, Weight: 1}}, Migration: &shard.Migration{
			From: &shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:1", Weight: 1}}}, Addrs: map[string]string{srv.Addr: p[0]}}}
		if err := mig.Validate(); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("Validate with Migration.Addrs to %s = %v, want ErrBadConfig", p[0], err)
		}
	}
	// Distinct ports stay distinct.
	other, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	r := listRouter{{Name: "a", Addr: srv.Addr}, {Name: "b", Addr: net.JoinHostPort("localhost", strconv.Itoa(other+1))}}
	if err := (shard.Config{Router: r}).Validate(); err != nil {
		t.Errorf("Validate with Router nodes on two ports: %v", err)
	}
}
