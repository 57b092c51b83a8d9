package shard_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
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
// later Nodes call answered. A panic in any other of the calls New and
// Validate make (Validate's check, the topology's ID, a migration's
// checks) went up through New to the caller, leaving the client's pools
// open. Whichever call panics, New and Validate now return an error
// matching ErrBadConfig and *PanicError, or (a call made once the
// client holds a list) New succeeds and the client keeps that list.
func TestReview11RouterNodesPanicInNewIsAnError(t *testing.T) {
	noLeaks(t)
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	_, port, err := net.SplitHostPort(servers[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, migrating := range []bool{false, true} {
		failedNew := 0
		for n := int64(1); n <= 8; n++ {
			r := &flakyNodesRouter{
				listed:  shard.Node{Name: "a", Addr: servers[0].Addr},
				routed:  shard.Node{Name: "a", Addr: net.JoinHostPort("localhost", port)},
				panicOn: map[int64]bool{n: true},
			}
			var reported atomic.Int32
			cfg := shard.Config{
				Router: r,
				Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second},
				Health: shard.HealthOptions{Interval: -1},
				Hooks:  &shard.Hooks{Panic: func(*shard.PanicError) { reported.Add(1) }},
			}
			if migrating {
				cfg.Migration = &shard.Migration{From: &shard.Config{Shards: []ring.Shard{{Addr: servers[1].Addr, Weight: 1}}}, Armed: true}
			}
			var c *shard.Client
			var newErr error
			panicked := false
			func() {
				defer func() {
					if v := recover(); v != nil {
						panicked = true
						t.Errorf("migrating %t, Nodes panicking on call %d: New panicked: %v", migrating, n, v)
					}
				}()
				c, newErr = shard.New(context.Background(), cfg)
			}()
			if panicked {
				continue
			}
			if newErr != nil {
				failedNew++
				var perr *shard.PanicError
				if !errors.Is(newErr, shard.ErrBadConfig) || !errors.As(newErr, &perr) {
					t.Errorf("migrating %t, Nodes panicking on call %d: New: %v, want ErrBadConfig and a *PanicError", migrating, n, newErr)
				} else if perr.Callback != "Router.Nodes" || perr.Value != "review11: Nodes" {
					t.Errorf("migrating %t, call %d: PanicError = %q %v, want Router.Nodes review11: Nodes", migrating, n, perr.Callback, perr.Value)
				}
				continue
			}
			// The client holds the list: Route's localhost:P is the listed node.
			_, doErr := c.Do(context.Background(), "SET", "k", "v")
			var addrs []string
			for _, ns := range c.Stats().Nodes {
				addrs = append(addrs, ns.Node.Addr)
			}
			if doErr != nil || slices.Contains(addrs, r.routed.Addr) {
				t.Errorf("migrating %t, Nodes panicking on call %d (of %d, %d panics reported): SET: %v; nodes in Stats: %q, want no %s",
					migrating, n, r.calls.Load(), reported.Load(), doErr, addrs, r.routed.Addr)
			}
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		}
		if failedNew < 2 {
			t.Errorf("migrating %t: New failed for %d of the calls, want at least Validate's and the client's list's", migrating, failedNew)
		}
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

// TestReview11ConfigStringSurvivesAPanickingRouter: Config.String names a
// migration's old topology by its TopologyID, which lists a Router's
// nodes: a Router whose Nodes panicked made String panic (fmt then
// printed "%!v(PANIC=String method: ...)" instead of the whole
// configuration). String now shows the rest, and that Nodes panicked.
func TestReview11ConfigStringSurvivesAPanickingRouter(t *testing.T) {
	r := &flakyNodesRouter{listed: shard.Node{Addr: "127.0.0.1:6379"}, panicOn: map[int64]bool{1: true}}
	cfg := shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:6380", Weight: 1}}, Migration: &shard.Migration{From: &shard.Config{Router: r}}}
	var s string
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Errorf("String panicked: %v", v)
			}
		}()
		s = cfg.String()
	}()
	for _, want := range []string{"127.0.0.1:6380", "Router.Nodes panicked: review11: Nodes"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %q, want it to show %q", s, want)
		}
	}
}
