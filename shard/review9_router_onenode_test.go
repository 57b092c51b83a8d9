package shard_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview9RouterOneAddressTwoNamesIsOneNode: a user's Router that
// places two ranges of keys on one server lists that server twice under
// two names and one address (yearRouter in migrate_test.go does). The
// client keeps one node for it, but ForEachShard ran fn on it twice and
// Scan walked it twice, reporting every key two times, and Client.Nodes
// listed it twice. The client now lists such a node once.
func TestReview9RouterOneAddressTwoNamesIsOneNode(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := listRouter{{Name: "recent", Addr: srv.Addr}, {Name: "archive", Addr: srv.Addr}}
	c, err := shard.New(ctx, shard.Config{Router: r, Health: shard.HealthOptions{Interval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	keys := []string{"review9:one:a", "review9:one:b", "review9:one:c"}
	for _, k := range keys {
		if _, err := c.Do(ctx, "SET", k, "1"); err != nil {
			t.Fatal(err)
		}
	}

	var visits atomic.Int64
	if err := c.ForEachShard(ctx, func(context.Context, shard.Node, redis.Conn) error {
		visits.Add(1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := visits.Load(); n != 1 {
		t.Errorf("ForEachShard ran fn %d times on the one server, want 1", n)
	}
	visits.Store(0)
	if err := c.ForEachNode(ctx, func(context.Context, shard.Node, redis.Conn) error {
		visits.Add(1)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := visits.Load(); n != 1 {
		t.Errorf("ForEachNode ran fn %d times on the one server, want 1", n)
	}

	count := map[string]int{}
	s := c.Scan(shard.ScanOptions{Match: "review9:one:*"})
	for s.Next(ctx) {
		count[s.Key()]++
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if len(count) != len(keys) {
		t.Errorf("Scan reported %v, want each of %v", count, keys)
	}
	for k, n := range count {
		if n != 1 {
			t.Errorf("Scan reported %s %d times, want once", k, n)
		}
	}

	if nodes := c.Nodes(); len(nodes) != 1 || nodes[0].Addr != srv.Addr {
		t.Errorf("Nodes = %v, want the one server", nodes)
	}
}
