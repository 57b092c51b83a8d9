package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// addrRouter is a user's Router that sends "bad:<addr>" keys to a node
// with that address and every other key to its one listed node.
type addrRouter struct{ listed shard.Node }

func (r addrRouter) Route(key string) (shard.Node, error) {
	if len(key) >= 4 && key[:4] == "bad:" {
		return shard.Node{Name: "broken", Addr: key[4:]}, nil
	}
	return r.listed, nil
}

func (r addrRouter) Nodes() []shard.Node { return []shard.Node{r.listed} }

// TestRouterBadNodeAddressIsNotAnUnknownOutcome checks what a user's Router
// that names a node with an unusable address gets: nothing can have been
// sent, so a write fails with the bad address as its cause, never as an
// outcome the caller must treat as "may have run", and the client's Stats
// list no phantom node for an empty address.
func TestRouterBadNodeAddressIsNotAnUnknownOutcome(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	base := ringConfig(servers)
	c := newClient(t, shard.Config{Router: addrRouter{listed: shard.Node{Name: "a", Addr: servers[0].Addr}}, Pool: base.Pool, Health: base.Health})

	tests := []struct {
		name, key string
		want      error
	}{
		{"empty address", "bad:", shard.ErrBadConfig},
		{"no port", "bad:127.0.0.1", pool.ErrBadAddr},
		{"port out of range", "bad:127.0.0.1:70000", pool.ErrBadAddr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, cmd := range [][]any{{"SET", tt.key, "v"}, {"INCR", tt.key}, {"MSET", tt.key, "v", "ok", "v"}} {
				_, err := c.Do(ctx, cmd[0].(string), cmd[1:]...)
				var uo *shard.UnknownOutcomeError
				if errors.As(err, &uo) {
					t.Errorf("%v: %v: nothing was sent, yet the outcome is called unknown", cmd, err)
				}
				if !errors.Is(err, tt.want) {
					t.Errorf("%v: %v, want %v", cmd, err, tt.want)
				}
			}
		})
	}
	for _, n := range c.Stats().Nodes {
		if n.Node.Addr == "" {
			t.Errorf("Stats lists a node without an address: %+v", n)
		}
	}
}

// listRouter is a user's Router that lists the given nodes.
type listRouter []shard.Node

func (r listRouter) Route(string) (shard.Node, error) { return r[0], nil }
func (r listRouter) Nodes() []shard.Node              { return r }

// TestConfigRefusesARouterWithUnusableNodes checks that Validate looks at a
// user's Router's nodes as it does at ring shards: none at all, or an
// address no dial can use, is a bad config, not a node that fails later.
func TestConfigRefusesARouterWithUnusableNodes(t *testing.T) {
	tests := []struct {
		name   string
		router listRouter
		ok     bool
	}{
		{"none", listRouter{}, false},
		{"empty address", listRouter{{Name: "a", Addr: ""}}, false},
		{"no port", listRouter{{Name: "a", Addr: "127.0.0.1"}}, false},
		{"port 0", listRouter{{Name: "a", Addr: "127.0.0.1:0"}}, false},
		{"second bad", listRouter{{Name: "a", Addr: "127.0.0.1:7000"}, {Name: "b", Addr: "x"}}, false},
		{"good", listRouter{{Name: "a", Addr: "127.0.0.1:7000"}, {Addr: "localhost:7001"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := shard.Config{Router: tt.router}.Validate()
			if tt.ok != (err == nil) {
				t.Fatalf("Validate: %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, shard.ErrBadConfig) {
				t.Fatalf("Validate: %v, want ErrBadConfig", err)
			}
		})
	}
}
