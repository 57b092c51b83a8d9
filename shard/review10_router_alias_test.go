package shard_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync"
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
// command while the listed node showed none, a node no health check
// watched, and a Scan that reported none of the keys (it walks the
// listed node and keeps the keys Route places there, compared by
// address). Route's answer is now taken as the listed node it spells.
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
				t.Errorf("Stats lists %d nodes for the one server: %+v", len(st), st)
			} else if st[0].Node.Addr != srv.Addr || st[0].Commands != n {
				t.Errorf("Stats = %+v, want node %s with %d commands", st[0], srv.Addr, n)
			}
			if got := c.Nodes(); len(got) != 1 || got[0].Addr != srv.Addr {
				t.Errorf("Nodes = %v, want the listed node only", got)
			}
			// Scan walks the listed node and reports the keys Route
			// places there.
			var keys []string
			sc := c.Scan(shard.ScanOptions{Match: "review10:alias*"})
			for sc.Next(ctx) {
				keys = append(keys, sc.Key())
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			if len(keys) != 1 || keys[0] != "review10:alias" {
				t.Errorf("Scan reported %q, want [review10:alias]", keys)
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

// switchRouter is a user's Router whose nodes and route the test changes.
type switchRouter struct {
	mu     sync.Mutex
	listed []shard.Node
	route  shard.Node
}

func (r *switchRouter) set(listed []shard.Node, route shard.Node) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listed, r.route = listed, route
}

func (r *switchRouter) Route(string) (shard.Node, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.route, nil
}

func (r *switchRouter) Nodes() []shard.Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.listed)
}

// TestReview10RouterRouteSpellsANodeListedSinceLastRead: the Router moves
// its keys to a new server it lists as 127.0.0.1:Q and routes to as
// localhost:Q. The client had read Nodes before the change (no health
// tick read it since), so the answer matched nothing it knew and became
// a node of its own beside the one Nodes names. An address the last list
// does not hold has Nodes read again first.
func TestReview10RouterRouteSpellsANodeListedSinceLastRead(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	_, port, err := net.SplitHostPort(servers[1].Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := shard.Node{Name: "a", Addr: servers[0].Addr}
	r := &switchRouter{listed: []shard.Node{first}, route: first}
	c, err := shard.New(ctx, shard.Config{Router: r, Health: shard.HealthOptions{Interval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(ctx, "SET", "review10:switch", "a"); err != nil {
		t.Fatal(err)
	}
	r.set([]shard.Node{{Name: "b", Addr: servers[1].Addr}}, shard.Node{Name: "b", Addr: net.JoinHostPort("localhost", port)})
	if _, err := c.Do(ctx, "SET", "review10:switch", "b"); err != nil {
		t.Fatal(err)
	}
	for _, ns := range c.Stats().Nodes {
		if ns.Node.Addr != servers[0].Addr && ns.Node.Addr != servers[1].Addr {
			t.Errorf("Stats lists %+v, a second node for %s", ns, servers[1].Addr)
		}
	}
	got, err := redis.String(servers[1].Do("GET", "review10:switch"))
	if err != nil || got != "b" {
		t.Errorf("GET on the new server = %q, %v; want b", got, err)
	}
}
