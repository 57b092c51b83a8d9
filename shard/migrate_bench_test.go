package shard

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/ring"
)

// BenchmarkMoveFirstStayingKey is what migration mode adds to a command
// on a key whose owner does not change: finding its keys and its old
// owner. No I/O: compare it with a command's round trip (tens of µs).
func BenchmarkMoveFirstStayingKey(b *testing.B) {
	shards := func(n int) []ring.Shard {
		var out []ring.Shard
		for i := 0; i < n; i++ {
			out = append(out, ring.Shard{Name: fmt.Sprint("s", i), Addr: fmt.Sprintf("127.0.0.1:%d", i+1), Weight: 1})
		}
		return out
	}
	from := Config{Shards: shards(3), Health: HealthOptions{Interval: -1}}
	to := Config{Shards: shards(4), Health: HealthOptions{Interval: -1}, Migration: &Migration{From: &from, Armed: true}}
	c, err := New(context.Background(), to)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	m := c.mig.Load()
	var key string
	var node int
	for i := 0; ; i++ {
		key = fmt.Sprint("user:", i)
		n, _, _ := c.loc.locate(key)
		old, _ := m.from.Route(key)
		if c.nodes.get(n).node.Addr == old.Addr {
			node = n
			break
		}
	}
	cl := &call{name: "GET", args: []any{key}, info: lookupCommand("GET"), node: node}
	calls := []*call{cl}
	ctx := context.Background()
	var ow overwrite
	b.ReportAllocs()
	for b.Loop() {
		c.moveFirst(ctx, m, calls, true, &ow) // as executeIn calls it
	}
	if cl.err != nil {
		b.Fatal(cl.err)
	}
}
