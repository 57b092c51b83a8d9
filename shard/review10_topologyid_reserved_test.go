package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// idRouter is a Router over fixed nodes that names its placement id.
type idRouter struct {
	nodes []shard.Node
	id    string
}

func (r idRouter) Route(key string) (shard.Node, error) { return r.nodes[0], nil }
func (r idRouter) Nodes() []shard.Node                  { return r.nodes }
func (r idRouter) TopologyID() string                   { return r.id }

// TestReview10TopologyIDerReservedNames: a TopologyIDer's ID is put into
// connection names ("shardis:<i>:<id>", "shardis:<i>:<phase>:<from>><to>")
// and fence keys. An ID of the naming scheme's own forms was accepted and
// broke it silently: "armed:v1" (or "migrating:", "fenced:") made every
// plain connection of the process unparsable, so the mover took it for an
// unnamed client; "cluster-v1" named the fence's marker "cluster", like
// every other "cluster-" ID (and "cluster" itself), and the mover let any
// cluster beacon stand for it; an empty one gave beacons the mover could
// not read. Such an ID is refused
// up front, with ErrBadConfig naming it, by Validate, New (also as a
// migration's From) and StartMigration.
func TestReview10TopologyIDerReservedNames(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	base := ringConfig(servers[:1])
	nodes := []shard.Node{{Name: "a", Addr: servers[0].Addr}, {Name: "b", Addr: servers[1].Addr}}
	cfgOf := func(id string) shard.Config {
		return shard.Config{Router: idRouter{nodes: nodes, id: id}, Pool: base.Pool, Health: base.Health}
	}
	bad := []string{"cluster-v1", "cluster", "armed:v1", "fenced:v1", "migrating:v1", ""}
	if len(bad) == 0 {
		t.Fatal("no case")
	}
	for _, id := range bad {
		if err := cfgOf(id).Validate(); !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "TopologyID") {
			t.Errorf("Validate with TopologyID %q: %v, want ErrBadConfig naming TopologyID", id, err)
		}
		if c, err := shard.New(ctx, cfgOf(id)); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("New with TopologyID %q: %v, want ErrBadConfig", id, err)
			if c != nil {
				c.Close()
			}
		}
		// As a migration's From.
		to := ringConfig(servers)
		from := cfgOf(id)
		to.Migration = &shard.Migration{From: &from}
		if c, err := shard.New(ctx, to); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("New migrating from TopologyID %q: %v, want ErrBadConfig", id, err)
			if c != nil {
				c.Close()
			}
		}
		// As StartMigration's target.
		c := newClient(t, ringConfig(servers[:1]))
		err := c.StartMigration(ctx, cfgOf(id))
		if !errors.Is(err, shard.ErrBadConfig) || !errors.Is(err, shard.ErrMigration) {
			t.Errorf("StartMigration to TopologyID %q: %v, want ErrBadConfig and ErrMigration", id, err)
		}
		if _, on := c.Migration(); on {
			t.Errorf("StartMigration to TopologyID %q was refused, but a migration is on", id)
		}
	}
	// Other IDs are fine: ':' inside, a phase word not followed by ':',
	// and characters that TopologyID replaces by '_' (a space, '>').
	for _, id := range []string{"years-v1", "years:v2", "armed", "clusters.v1", "years v1", "years->2021"} {
		if err := cfgOf(id).Validate(); err != nil {
			t.Errorf("Validate with TopologyID %q: %v, want it accepted", id, err)
		}
		c := newClient(t, ringConfig(servers[:1]))
		if err := c.StartMigration(ctx, cfgOf(id)); err != nil {
			t.Errorf("StartMigration to TopologyID %q: %v", id, err)
		}
	}
}
