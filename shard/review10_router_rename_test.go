package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview10RouterChangesTakeEffect pins down what the Router godoc
// promises a Router whose nodes change: Route's answer is where the next
// command goes, at once; the names and the set of nodes the client
// reports (Stats, NodeError, events) follow Nodes from the next health
// tick; Client.Nodes reads Nodes at each call.
func TestReview10RouterChangesTakeEffect(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := shard.Node{Name: "recent", Addr: servers[0].Addr}
	r := &switchRouter{listed: []shard.Node{a}, route: a}
	c, err := shard.New(ctx, shard.Config{Router: r, Health: shard.HealthOptions{Interval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// waitStats polls Stats until ok holds of its node list.
	waitStats := func(what string, ok func([]shard.NodeStats) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			st := c.Stats().Nodes
			if ok(st) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: Stats still %+v", what, st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// A rename: the same address under a new name.
	renamed := shard.Node{Name: "archive", Addr: servers[0].Addr}
	r.set([]shard.Node{renamed}, renamed)
	if got := c.Nodes(); len(got) != 1 || got[0] != renamed {
		t.Errorf("Nodes after the rename = %v, want %v", got, renamed)
	}
	waitStats("rename", func(st []shard.NodeStats) bool {
		return len(st) == 1 && st[0].Node == renamed
	})

	// A move: the next command goes to the new server, without a tick.
	moved := shard.Node{Name: "moved", Addr: servers[1].Addr}
	r.set([]shard.Node{moved}, moved)
	if _, err := c.Do(ctx, "SET", "review10:rename", "new"); err != nil {
		t.Fatal(err)
	}
	if got, err := redis.String(servers[1].Do("GET", "review10:rename")); err != nil || got != "new" {
		t.Errorf("GET on the new server = %q, %v; want new", got, err)
	}
	if n, err := servers[0].Do("EXISTS", "review10:rename"); err != nil || n != "0" {
		t.Errorf("EXISTS on the old server = %q, %v; want 0", n, err)
	}
	waitStats("move", func(st []shard.NodeStats) bool {
		return len(st) == 1 && st[0].Node == moved
	})
}
