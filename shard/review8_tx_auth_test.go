package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// authPaths runs one GET of key through every way a command reaches a
// node: Client.Do, a Pipeline, a Tx (its WATCH, then a Tx.Do), a Conn (a
// routed Do, a PING of every shard, a WATCH, MULTI ... EXEC) and returns each one's error (no
// "Tx.Do" when the Tx failed at its WATCH).
func authPaths(t *testing.T, c *shard.Client, key string) map[string]error {
	t.Helper()
	ctx := context.Background()
	out := map[string]error{}
	_, out["Client.Do"] = c.Do(ctx, "GET", key)

	p := c.Pipeline()
	p.Send("GET", key)
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 1)
	out["Pipeline"] = res[0].Err

	_, out["Tx"] = c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		_, err := tx.Do("GET", key)
		out["Tx.Do"] = err
		return err
	})

	conn := c.Conn()
	defer conn.Close()
	_, out["Conn.Do"] = conn.Do("GET", key)
	_, out["Conn PING"] = conn.Do("PING")
	_, out["Conn WATCH"] = conn.Do("WATCH", key)
	_, _ = conn.Do("UNWATCH")
	require.NoError(t, conn.Send("MULTI"))
	require.NoError(t, conn.Send("GET", key))
	_, out["Conn MULTI/EXEC"] = conn.Do("EXEC")
	return out
}

// A server's refusal of the connection's credentials (NOAUTH: the node
// wants a password the client does not send) is a *pool.AuthError
// (errors.Is(err, pool.ErrAuth)) through Client.Do and a Pipeline; a
// transaction (Client.Tx, and WATCH or MULTI ... EXEC on a Conn) used to
// return the bare redis.Error, so a caller matching pool.ErrAuth missed
// it there. A command the user may not run (NOPERM) is the command's own
// error on every path, never an authentication failure.
func TestReview8TransactionAuthRepliesAreTyped(t *testing.T) {
	t.Run("NOAUTH", func(t *testing.T) {
		server := redistest.StartTB(t, redistest.Options{DefaultPassword: "r8-tx-secret"})
		cfg := ringConfig([]*redistest.Server{server})
		cfg.Health = shard.HealthOptions{Interval: -1}
		c := newClient(t, cfg)
		errs := authPaths(t, c, "r8auth:k")
		require.Len(t, errs, 7) // Tx.Do is not there: fn never ran
		for path, err := range errs {
			require.Error(t, err, path)
			assert.ErrorIs(t, err, pool.ErrAuth, "%s: %v", path, err)
			var ae *pool.AuthError
			assert.ErrorAs(t, err, &ae, path)
			var re redis.Error
			assert.ErrorAs(t, err, &re, "%s: the server's reply stays reachable", path)
			assert.NotContains(t, err.Error(), "r8-tx-secret", path)
		}
	})
	t.Run("NOPERM", func(t *testing.T) {
		server := redistest.StartTB(t, redistest.Options{Users: []redistest.User{
			{Name: "admin", Password: "admin-pass-8"},
			{Name: "app", Password: "app-pass-8", Rules: "~* +@all -get"},
		}})
		cfg := ringConfig([]*redistest.Server{server})
		cfg.Health = shard.HealthOptions{Interval: -1}
		cfg.Pool.Username, cfg.Pool.Password = "app", "app-pass-8"
		c := newClient(t, cfg)
		errs := authPaths(t, c, "r8auth:k")
		require.Len(t, errs, 8)
		for path, err := range errs {
			if path == "Conn WATCH" || path == "Conn PING" {
				require.NoError(t, err, "%s is allowed", path)
				continue
			}
			require.Error(t, err, path)
			assert.NotErrorIs(t, err, pool.ErrAuth, "%s: %v", path, err)
			var re redis.Error
			require.ErrorAs(t, err, &re, path)
			if path != "Conn MULTI/EXEC" { // EXECABORT, after GET's NOPERM
				assert.True(t, strings.HasPrefix(string(re), "NOPERM"), "%s: %v", path, err)
			}
		}
		// The node is not at fault: it still serves the user.
		_, err := c.Do(context.Background(), "SET", "r8auth:k", "v")
		require.NoError(t, err)
	})
}

// An AUTH the caller sends in a transaction with credentials the server
// refuses (WRONGPASS) is that command's error: the connection keeps its
// own credentials, so it is no authentication failure of the client's
// and no failure of the node.
func TestReview8TransactionOwnAuthRefusalIsTheCommandsError(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Health = shard.HealthOptions{Interval: -1}
	c := newClient(t, cfg)
	_, err := c.Tx(context.Background(), []string{"r8auth:k"}, func(tx *shard.Tx) error {
		_, err := tx.Do("AUTH", "r8-nobody", "r8-wrong-pass")
		return err
	})
	require.Error(t, err)
	var re redis.Error
	require.ErrorAs(t, err, &re)
	assert.True(t, strings.HasPrefix(string(re), "WRONGPASS"), "%v", err)
	assert.NotErrorIs(t, err, pool.ErrAuth)
	assert.Zero(t, c.Stats().Nodes[0].Errors, "a failure of the node was counted")
}
