package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// ringGrowth is a ring of three redis-servers growing to four: the
// servers, the configs of both rings, and the rings, which tell the keys
// that move from those that stay.
type ringGrowth struct {
	servers  []*redistest.Server
	from, to shard.Config
	rf, rt   *ring.Ring
}

// newRingGrowth starts four servers (stopped when b ends) for a 3 -> 4
// ring.
func newRingGrowth(b *testing.B) ringGrowth {
	b.Helper()
	g := ringGrowth{servers: redistest.StartNTB(b, 4, redistest.Options{})}
	shards := func(n int) []ring.Shard {
		var out []ring.Shard
		for i, s := range g.servers[:n] {
			out = append(out, ring.Shard{Name: fmt.Sprint("s", i), Addr: s.Addr, Weight: 1})
		}
		return out
	}
	g.from, g.to = shard.Config{Shards: shards(3)}, shard.Config{Shards: shards(4)}
	var err error
	if g.rf, err = ring.New(g.from.RingConfig()); err != nil {
		b.Fatal(err)
	}
	if g.rt, err = ring.New(g.to.RingConfig()); err != nil {
		b.Fatal(err)
	}
	return g
}

// moves reports whether key k has another owner in the grown ring.
func (g ringGrowth) moves(k string) bool {
	return g.rf.Shards()[g.rf.Locate(k)].Addr != g.rt.Shards()[g.rt.Locate(k)].Addr
}

// fill writes keys (the package's value) through a client on the old
// ring, pipelined.
func (g ringGrowth) fill(b *testing.B, keys []string) {
	b.Helper()
	old, err := shard.New(context.Background(), g.from)
	if err != nil {
		b.Fatal(err)
	}
	err = Pipelined(context.Background(), old, keys, value, 1000)
	old.Close()
	if err != nil {
		b.Fatal(err)
	}
}
