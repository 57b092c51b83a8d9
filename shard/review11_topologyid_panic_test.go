package shard_test

import (
	"errors"
	"testing"

	"github.com/shardis/shardis/shard"
)

// idPanicNodesRouter is a user's Router whose Nodes panics.
type idPanicNodesRouter struct{}

func (idPanicNodesRouter) Route(string) (shard.Node, error) {
	return shard.Node{Addr: "127.0.0.1:1"}, nil
}
func (idPanicNodesRouter) Nodes() []shard.Node { panic("review11: Nodes") }

// idPanicIDRouter is a TopologyIDer whose TopologyID panics.
type idPanicIDRouter struct{ idPanicNodesRouter }

func (idPanicIDRouter) Nodes() []shard.Node { return []shard.Node{{Addr: "127.0.0.1:1"}} }
func (idPanicIDRouter) TopologyID() string  { panic("review11: TopologyID") }

// TestReview11TopologyIDRouterPanic pins what TopologyID's godoc says:
// TopologyID, whose signature has no error, lets a panic of the Router's
// code reach its caller, while Validate reports the same panic as an error
// matching ErrBadConfig and *PanicError naming the callback.
func TestReview11TopologyIDRouterPanic(t *testing.T) {
	for _, c := range []struct {
		router   shard.Router
		value    string
		callback string
	}{
		{idPanicNodesRouter{}, "review11: Nodes", "Router.Nodes"},
		{idPanicIDRouter{}, "review11: TopologyID", "TopologyIDer.TopologyID"},
	} {
		cfg := shard.Config{Router: c.router}
		got := func() (p any) {
			defer func() { p = recover() }()
			shard.TopologyID(cfg)
			return nil
		}()
		if got != c.value {
			t.Errorf("TopologyID with %T: panic %v, want %q", c.router, got, c.value)
		}
		err := cfg.Validate()
		var pe *shard.PanicError
		if !errors.Is(err, shard.ErrBadConfig) || !errors.As(err, &pe) {
			t.Errorf("Validate with %T = %v, want ErrBadConfig and *PanicError", c.router, err)
			continue
		}
		if pe.Callback != c.callback || pe.Value != c.value {
			t.Errorf("Validate with %T: PanicError{%q, %v}, want {%q, %q}", c.router, pe.Callback, pe.Value, c.callback, c.value)
		}
	}
}
