package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// noPermUser creates on each server an ACL user that may run everything
// but GET (r13noget), and one that may touch no key of the tests
// (r13nokey).
func noPermUser(t *testing.T, servers []*redistest.Server) {
	t.Helper()
	for _, s := range servers {
		_, err := s.Do("ACL", "SETUSER", "r13noget", "on", ">pw", "~*", "&*", "+@all", "-get")
		require.NoError(t, err)
		_, err = s.Do("ACL", "SETUSER", "r13nokey", "on", ">pw", "~other:*", "&*", "+@all")
		require.NoError(t, err)
	}
}

// requireNoPerm checks that err carries the server's NOPERM reply.
func requireNoPerm(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	var re redis.Error
	require.True(t, errors.As(err, &re), "%s: %v (%T) is no redis.Error", what, err, err)
	require.Contains(t, err.Error(), "NOPERM", what)
}

// requireNodesServing checks that no node was marked down nor counted an
// error: a NOPERM is the caller's refusal, not a failure of the node.
func requireNodesServing(t *testing.T, c *shard.Client, what string) {
	t.Helper()
	st := c.Stats().Nodes
	require.NotEmpty(t, st)
	for _, n := range st {
		require.False(t, n.Down, "%s: node %s down", what, n.Node.Addr)
		require.Zero(t, n.Errors, "%s: node %s errors", what, n.Node.Addr)
	}
}

// TestReview13TxNoPermCause: a transaction whose queued command the
// server refuses with NOPERM (an ACL user without that command) fails
// with that NOPERM, on every transaction path and with the automatic
// pipeline forced on, and the refusal counts nothing against the node.
func TestReview13TxNoPermCause(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	noPermUser(t, servers)
	_, err := servers[0].Do("SET", "r13np:k", "v")
	require.NoError(t, err)
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = "r13noget", "pw"
	checkTxNoPerm(t, newClient(t, cfg))

	rc := clusterForTest(t)
	noPermUser(t, rc.Nodes)
	t.Cleanup(func() {
		for _, s := range rc.Nodes {
			_, _ = s.Do("ACL", "DELUSER", "r13noget", "r13nokey")
		}
	})
	cfg = clusterConfig(rc.Seeds()...)
	cfg.Pool.Username, cfg.Pool.Password = "r13noget", "pw"
	checkTxNoPerm(t, newClient(t, cfg))
}

// checkTxNoPerm runs a transaction whose GET the server refuses through
// Client.Tx, a Conn and a Pipeline of c, with the automatic pipeline
// forced on.
func checkTxNoPerm(t *testing.T, c *shard.Client) {
	t.Helper()
	ctx := context.Background()
	shard.AlwaysPipeline(c)
	_, err := c.Tx(ctx, []string{"r13np:k"}, func(tx *shard.Tx) error {
		return tx.Queue("GET", "r13np:k")
	})
	requireNoPerm(t, err, "Client.Tx")

	conn := c.Conn()
	defer conn.Close()
	_, err = conn.Do("MULTI")
	require.NoError(t, err)
	_, err = conn.Do("GET", "r13np:k")
	requireNoPerm(t, err, "Conn: the queued GET")
	_, err = conn.Do("EXEC")
	require.Error(t, err, "Conn: EXEC")
	require.Contains(t, err.Error(), "EXECABORT")

	p := c.Pipeline()
	p.Send("MULTI")
	p.Send("GET", "r13np:k")
	p.Send("EXEC")
	res, err := p.Exec(ctx)
	if err == nil {
		require.Len(t, res, 3)
		requireNoPerm(t, res[1].Err, "Pipeline: the queued GET")
		require.Error(t, res[2].Err, "Pipeline: EXEC")
	} else {
		requireNoPerm(t, err, "Pipeline")
	}
	requireNodesServing(t, c, "after the refused transactions")
}

// TestReview13MigrationReadNoPerm: during a ring migration, the first
// read of a moving key runs as MULTI, EXISTS, the read and EXEC at its old
// owner, through the old owner's automatic pipeline. A user whom the
// server refuses the read (NOPERM) gets that refusal, the key is not
// moved by a read that was refused, and the node counts no failure.
func TestReview13MigrationReadNoPerm(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	noPermUser(t, servers)
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	byAddr := serversByAddr(servers)
	var key, oldAddr string
	for i := 0; i < 100000 && key == ""; i++ {
		k := fmt.Sprintf("r13mr:%d", i)
		if o := ringOwner(t, from, k); o != ringOwner(t, to, k) {
			key, oldAddr = k, o
		}
	}
	require.NotEmpty(t, key)
	for _, tc := range []struct {
		user  string
		piped bool
	}{{"r13noget", true}, {"r13noget", false}, {"r13nokey", true}, {"r13nokey", false}} {
		t.Run(fmt.Sprintf("%s/pipelined=%t", tc.user, tc.piped), func(t *testing.T) {
			for _, s := range servers {
				_, err := s.Do("DEL", key)
				require.NoError(t, err)
			}
			_, err := byAddr[oldAddr].Do("SET", key, "v")
			require.NoError(t, err)
			migrates := migrateCalls(t, servers)
			cfg := armedConfig(from, to)
			cfg.Pool.Username, cfg.Pool.Password = tc.user, "pw"
			c := newClient(t, cfg)
			if tc.piped {
				shard.AlwaysPipeline(c)
			}
			_, err = c.Do(ctx, "GET", key)
			requireNoPerm(t, err, "GET")
			require.NotContains(t, err.Error(), "EXECABORT", "the client's own transaction shows")
			require.NotContains(t, err.Error(), "moving key", "the refusal of a MIGRATE the caller never sent shows")
			require.Equal(t, []string{oldAddr}, holders(t, servers, key), "a refused read moved its key")
			require.Equal(t, migrates, migrateCalls(t, servers), "MIGRATE for a refused read")
			requireNodesServing(t, c, "after the refused read")
		})
	}
}
