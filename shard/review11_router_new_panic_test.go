package shard_test

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// flakyNodesRouter is a user's Router over one server, listed as
// 127.0.0.1:P and routed to as localhost:P (another spelling the client
// maps to the listed node), whose Nodes panics on the calls numbered in
// panicOn (1 is the first).
type flakyNodesRouter struct {
	listed, routed shard.Node
	panicOn        map[int64]bool
	calls          atomic.Int64
}

func (r *flakyNodesRouter) Route(string) (shard.Node, error) { return r.routed, nil }

func (r *flakyNodesRouter) Nodes() []shard.Node {
	if r.panicOn[r.calls.Add(1)] {
		panic("review11: Nodes")
	}
	return []shard.Node{r.listed}
}

// TestReview11RouterNodesPanicInNewIsAnError: a Router whose Nodes
// panicked while New listed its nodes for the client (after Validate's
// call had passed) gave a client all the same, with no node list: the
// panic went to the log, Route's answers were taken as written
// (localhost:P became a node of its own next to the listed
// 127.0.0.1:P, an address with credentials in it was dialed), until a
// later Nodes call answered. And a panic in Validate's own call went up
// through New to the caller. New and Validate now return an error
// matching ErrBadConfig and *PanicError, and New leaves nothing running.
func TestReview11RouterNodesPanicInNewIsAnError(t *testing.T) {
	noLeaks(t)
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	_, port, err := net.SplitHostPort(servers[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		panicOn map[int64]bool
	}{
		{"the first call (Validate's)", map[int64]bool{1: true}},
		{"the second call (the client's list)", map[int64]bool{2: true}},
		{"the third call", map[int64]bool{3: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &flakyNodesRouter{
				listed:  shard.Node{Name: "a", Addr: servers[0].Addr},
				routed:  shard.Node{Name: "a", Addr: net.JoinHostPort("localhost", port)},
				panicOn: tc.panicOn,
			}
			var reported atomic.Int32
			cfg := shard.Config{
				Router: r,
				Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second},
				Health: shard.HealthOptions{Interval: -1},
				Hooks:  &shard.Hooks{Panic: func(*shard.PanicError) { reported.Add(1) }},
			}
			var c *shard.Client
			var err error
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Errorf("New panicked: %v", v)
					}
				}()
				c, err = shard.New(context.Background(), cfg)
			}()
			if err == nil && c != nil {
				defer c.Close()
				_, doErr := c.Do(context.Background(), "SET", "k", "v")
				var names []string
				for _, n := range c.Stats().Nodes {
					names = append(names, n.Node.Addr)
				}
				t.Fatalf("New with Nodes panicking on call %v returned a client (Nodes called %d times, %d panics reported); SET: %v; nodes in Stats: %q",
					tc.panicOn, r.calls.Load(), reported.Load(), doErr, names)
			}
			if err == nil {
				return // New panicked: reported above
			}
			if !errors.Is(err, shard.ErrBadConfig) {
				t.Errorf("New: %v, want ErrBadConfig", err)
			}
			var perr *shard.PanicError
			if !errors.As(err, &perr) {
				t.Fatalf("New: %v, want a *PanicError", err)
			}
			if perr.Callback != "Router.Nodes" || perr.Value != "review11: Nodes" {
				t.Errorf("PanicError = %q %v, want Router.Nodes review11: Nodes", perr.Callback, perr.Value)
			}
		})
	}

	// Validate alone, likewise.
	r := &flakyNodesRouter{listed: shard.Node{Addr: servers[0].Addr}, panicOn: map[int64]bool{1: true}}
	var err2 error
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Errorf("Validate panicked: %v", v)
			}
		}()
		err2 = shard.Config{Router: r}.Validate()
	}()
	var perr *shard.PanicError
	if !errors.Is(err2, shard.ErrBadConfig) || !errors.As(err2, &perr) {
		t.Errorf("Validate: %v, want ErrBadConfig and a *PanicError", err2)
	}
}
