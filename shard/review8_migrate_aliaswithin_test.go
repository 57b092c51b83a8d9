package shard_test

import (
	"context"
	"hash/fnv"
	"net"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// hashRouter places keys over its nodes by an FNV hash of the key.
type hashRouter []shard.Node

func (r hashRouter) Route(key string) (shard.Node, error) {
	h := fnv.New32a()
	h.Write([]byte(key))
	return r[h.Sum32()%uint32(len(r))], nil
}

func (r hashRouter) Nodes() []shard.Node { return r }

// One server named twice within one topology of a migration (127.0.0.1:P
// and localhost:P as two nodes of a Router) is refused as one named
// across the two topologies is (review7_migrate_alias_test.go): a key
// placed under one spelling by one topology and under the other by the
// other would "move" to the server it is on, a MIGRATE to itself. The
// check compared only the addresses of one side alone with those of the
// other side alone, so an alias within a side went through whenever the
// other spelling was in both topologies or the other side had no address
// of its own. Config.Validate now compares a Router's nodes as it
// compares a ring's shards, so such a Router is a bad config before any
// migration check (the error matches ErrBadConfig and names both
// spellings): a client cannot be built with it, and a refused
// StartMigration leaves no migration on.
func TestReview8MigrationRefusesOneServerTwiceWithinATopology(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	_, port, err := net.SplitHostPort(servers[0].Addr)
	require.NoError(t, err)
	alias := net.JoinHostPort("localhost", port)
	base := ringConfig(servers)
	node := func(name, addr string) shard.Node { return shard.Node{Name: name, Addr: addr} }
	ring := func(s ...*redistest.Server) shard.Config { return ringConfig(s) }
	router := func(nodes ...shard.Node) shard.Config {
		return shard.Config{Router: hashRouter(nodes), Pool: base.Pool, Health: base.Health}
	}
	n0, n1, n2, na := node("a", servers[0].Addr), node("b", servers[1].Addr), node("c", servers[2].Addr), node("alias", alias)
	for _, tt := range []struct {
		name     string
		from, to shard.Config
	}{
		{"twice in the new topology", ring(servers[0], servers[1]), router(n0, n1, na)},
		{"twice in the new topology, nothing of its own", router(n0, n1, n2), router(n0, na, n1)},
		{"twice in the old topology", router(n0, na, n1), ring(servers[0], servers[2])},
		{"twice in the old topology, nothing of its own", router(n0, na, n1), router(n0, n1)},
	} {
		check := func(t *testing.T, err error) {
			t.Helper()
			require.Error(t, err, "one server under two addresses was accepted")
			require.ErrorIs(t, err, shard.ErrBadConfig)
			require.Contains(t, err.Error(), alias)
			require.Contains(t, err.Error(), servers[0].Addr)
		}
		t.Run(tt.name+"/New", func(t *testing.T) {
			cfg := tt.to
			from := tt.from
			cfg.Migration = &shard.Migration{From: &from}
			c, err := shard.New(ctx, cfg)
			if err == nil {
				c.Close()
			}
			check(t, err)
		})
		t.Run(tt.name+"/StartMigration", func(t *testing.T) {
			if err := tt.from.Validate(); err != nil {
				// The old topology is the alias: no client routes by it.
				c, err := shard.New(ctx, tt.from)
				if err == nil {
					c.Close()
				}
				check(t, err)
				return
			}
			c := newClient(t, tt.from)
			check(t, c.StartMigration(ctx, tt.to))
			_, on := c.Migration()
			require.False(t, on, "a refused migration is on")
		})
	}
}
