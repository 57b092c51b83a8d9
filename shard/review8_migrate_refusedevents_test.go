package shard_test

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A StartMigration that is refused changes no topology: the nodes of the
// refused new topology must not be reported as retired (Hooks.NodeState:
// NodeRetired) nor listed in Stats, since they never joined. The refusal
// of one server under two addresses (migrate_alias.go) used to come after
// the new topology's nodes were registered with the client, which then
// retired them, one NodeRetired each.
func TestReview8RefusedStartMigrationReportsNoNodeEvent(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	loc := func(addr string) string {
		_, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		return net.JoinHostPort("localhost", port)
	}
	base := ringConfig(servers)
	router := func(addrs ...string) shard.Config {
		var nodes []shard.Node
		for _, a := range addrs {
			nodes = append(nodes, shard.Node{Name: a, Addr: a})
		}
		return shard.Config{Router: hashRouter(nodes), Pool: base.Pool, Health: base.Health}
	}
	badWeight := ringConfig(servers[1:])
	badWeight.Shards[0].Weight = 0
	master := rc.Masters()[0].Addr
	for _, tt := range []struct {
		name     string
		from, to shard.Config
	}{
		{"a ring naming an old node by another address", ringConfig(servers[:2]),
			func() shard.Config {
				cfg := ringConfig(servers[:1])
				cfg.Shards = append(cfg.Shards, ring.Shard{Name: "two", Addr: servers[2].Addr, Weight: 1},
					ring.Shard{Name: "alias", Addr: loc(servers[1].Addr), Weight: 1})
				return cfg
			}()},
		{"a Router naming a new node twice", ringConfig(servers[:2]), router(servers[0].Addr, servers[2].Addr, loc(servers[2].Addr))},
		{"a cluster whose master is an old node", func() shard.Config {
			cfg := ringConfig(servers[:1])
			cfg.Shards = append(cfg.Shards, ring.Shard{Name: "master", Addr: loc(master), Weight: 1})
			return cfg
		}(), clusterConfig(rc.Seeds()...)},
		{"a bad config", ringConfig(servers[:2]), badWeight},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu     sync.Mutex
				events []shard.NodeEvent
			)
			from := tt.from
			from.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
				mu.Lock()
				events = append(events, ev)
				mu.Unlock()
			}}
			c := newClient(t, from)
			var before []string
			for _, n := range c.Stats().Nodes {
				before = append(before, n.Node.Addr)
			}
			slices.Sort(before)
			err := c.StartMigration(ctx, tt.to)
			require.ErrorIs(t, err, shard.ErrBadConfig)
			mu.Lock()
			got := slices.Clone(events)
			mu.Unlock()
			require.Empty(t, got, "node events after a refused StartMigration")
			var after []string
			for _, n := range c.Stats().Nodes {
				after = append(after, n.Node.Addr)
			}
			slices.Sort(after)
			require.Equal(t, before, after, "Stats lists the nodes of a refused topology")
		})
	}
}
