package shard_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// aliasRouter lists its nodes and routes every key to route, which need
// not be spelt as the listed node it names.
type aliasRouter struct {
	listed []shard.Node
	route  shard.Node
}

func (r aliasRouter) Route(string) (shard.Node, error) { return r.route, nil }
func (r aliasRouter) Nodes() []shard.Node              { return r.listed }

// TestReview10RouterRouteSpellsAListedNodeOtherwise: a user's Router whose
// Nodes lists 127.0.0.1:P and whose Route answers localhost:P (or
// 0.0.0.0:P, or [::ffff:127.0.0.1]:P) names one server, which Validate
// knows (it refuses the two spellings side by side in Nodes). The client
// compared Route's address as written, so it registered a second node for
// the server: a second pool, a second entry in Stats carrying every
// command while the listed node showed none, and a node no health check
// watched. Route's answer is now taken as the listed node it spells.
func TestReview10RouterRouteSpellsAListedNodeOtherwise(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	_, port, err := net.SplitHostPort(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	for _, host := range []string{"localhost", "0.0.0.0", "::ffff:127.0.0.1"} {
		alias := net.JoinHostPort(host, port)
		t.Run(host, func(t *testing.T) {
			// The premise: the spelling reaches the one server.
			conn, err := redis.Dial("tcp", alias)
			if err != nil {
				t.Fatalf("dial %s: %v", alias, err)
			}
			conn.Close()

			r := aliasRouter{
				listed: []shard.Node{{Name: "main", Addr: srv.Addr}},
				route:  shard.Node{Name: "main", Addr: alias},
			}
			c, err := shard.New(ctx, shard.Config{Router: r, Health: shard.HealthOptions{Interval: -1}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const n = 5
			for i := range n {
				if _, err := c.Do(ctx, "SET", "review10:alias", i); err != nil {
					t.Fatal(err)
				}
			}
			st := c.Stats().Nodes
			if len(st) != 1 {
				t.Fatalf("Stats lists %d nodes for the one server: %+v", len(st), st)
			}
			if st[0].Node.Addr != srv.Addr || st[0].Commands != n {
				t.Errorf("Stats = %+v, want node %s with %d commands", st[0], srv.Addr, n)
			}
			if got := c.Nodes(); len(got) != 1 || got[0].Addr != srv.Addr {
				t.Errorf("Nodes = %v, want the listed node only", got)
			}
		})
	}
}

// TestReview10RouterRouteSpellsTwoListedNodes: a Route answer of
// localhost:P when Nodes lists both 127.0.0.1:P and [::1]:P (two servers,
// one on each loopback address) names either: the command fails with
// ErrBadConfig naming both nodes before anything is sent, instead of
// going to whichever address the dialer tries first.
func TestReview10RouterRouteSpellsTwoListedNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := aliasRouter{
		listed: []shard.Node{{Name: "v4", Addr: "127.0.0.1:7431"}, {Name: "v6", Addr: "[::1]:7431"}},
		route:  shard.Node{Name: "either", Addr: "localhost:7431"},
	}
	c, err := shard.New(ctx, shard.Config{Router: r, Health: shard.HealthOptions{Interval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Do(ctx, "SET", "review10:alias", "1")
	if !errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("Do = %v, want ErrBadConfig", err)
	}
	for _, want := range []string{"localhost:7431", "127.0.0.1:7431", "[::1]:7431"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
}
