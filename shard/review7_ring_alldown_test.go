package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// With auto-eject and every ring shard down (so ejected), a command has
// no shard to go to; its error said only ErrNoNodes, hiding that the
// shards were down and why, which the health checks knew. It now also
// wraps each down shard's failure as a *NodeError matching ErrNodeDown,
// as Subscribe does.
func TestReview7RingAllEjectedCommandKeepsTheCauses(t *testing.T) {
	c, addrs := allEjectedRing(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn := c.Conn()
	defer conn.Close()
	for _, tc := range []struct {
		name string
		run  func() error
	}{
		{"Do", func() error { _, err := c.Do(ctx, "GET", "r7ad:a"); return err }},
		{"Conn.Do", func() error { _, err := conn.Do("SET", "r7ad:b", "v"); return err }},
		{"Pipeline", func() error {
			p := c.Pipeline()
			p.Send("GET", "r7ad:c")
			res, err := p.Exec(ctx)
			if err != nil {
				return err
			}
			if len(res) != 1 {
				t.Fatalf("%d results, want 1", len(res))
			}
			return res[0].Err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if !errors.Is(err, shard.ErrNoNodes) {
				t.Fatalf("error %v, want one matching ErrNoNodes", err)
			}
			if !errors.Is(err, shard.ErrNodeDown) {
				t.Errorf("error %v does not say the shards are down (ErrNodeDown)", err)
			}
			var ne *shard.NodeError
			if !errors.As(err, &ne) {
				t.Errorf("error %v wraps no *NodeError", err)
			} else if !addrs[ne.Node.Addr] {
				t.Errorf("the *NodeError names %v, not a shard", ne.Node)
			}
			var re redis.Error
			if errors.As(err, &re) {
				t.Errorf("error %v reads as a server reply", err)
			}
		})
	}
}
