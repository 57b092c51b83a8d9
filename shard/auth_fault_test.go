package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// authCalls sends n commands (single ones and pipelines), spread over
// more than span, and checks that every one fails as an authentication
// failure: errors.Is(err, pool.ErrAuth), a *pool.AuthError inside, and no
// password in the text. It returns how many also matched ErrNodeDown.
func authCalls(t *testing.T, c *shard.Client, n int, span time.Duration, secrets ...string) (down int) {
	t.Helper()
	pause := span / time.Duration(n)
	start := time.Now()
	for i := 0; i < n || time.Since(start) < span; i++ {
		var err error
		if i%5 == 4 {
			p := c.Pipeline()
			p.Send("SET", "auth:k", i)
			p.Send("GET", "auth:k")
			res, perr := p.Exec(context.Background())
			require.NoError(t, perr)
			require.Len(t, res, 2)
			assert.Equal(t, errors.Is(res[0].Err, pool.ErrAuth), errors.Is(res[1].Err, pool.ErrAuth))
			err = res[1].Err
		} else {
			_, err = c.Do(context.Background(), "GET", "auth:k")
		}
		require.Error(t, err, "call %d", i)
		require.True(t, errors.Is(err, pool.ErrAuth), "call %d after %v: %v", i, time.Since(start), err)
		var ae *pool.AuthError
		require.ErrorAs(t, err, &ae, "call %d", i)
		for _, s := range secrets {
			require.NotContains(t, err.Error(), s, "a secret in the error")
		}
		if errors.Is(err, shard.ErrNodeDown) {
			down++
		}
		time.Sleep(pause)
	}
	return down
}

// Wrong credentials stay an authentication failure on every call, for as
// long as they are wrong: the node may be marked down (so calls fail fast
// without dialing), but the error keeps the cause, matchable with
// errors.Is(err, pool.ErrAuth) (it used to become a bare "node is down"
// after a few health checks). When the credentials are right again, the
// node serves again.
func TestWrongCredentialsStayAuthErrors(t *testing.T) {
	t.Run("wrong password configured", func(t *testing.T) {
		server := redistest.StartTB(t, redistest.Options{DefaultPassword: "right-pass-1"})
		cfg := ringConfig([]*redistest.Server{server})
		cfg.Pool.Password = "wrong-pass-2"
		c := newClient(t, cfg)
		down := authCalls(t, c, 300, 10*cfg.Health.Interval, "right-pass-1", "wrong-pass-2")
		assert.Positive(t, down, "health checks marked the node down (and kept the cause)")
	})
	t.Run("password rotated on the server", func(t *testing.T) {
		server := redistest.StartTB(t, redistest.Options{Users: []redistest.User{
			{Name: "admin", Password: "admin-pass-0"},
			{Name: "app", Password: "old-pass-1"},
		}})
		cfg := ringConfig([]*redistest.Server{server})
		cfg.Pool.Username, cfg.Pool.Password = "app", "old-pass-1"
		c := newClient(t, cfg)
		_, err := c.Do(context.Background(), "SET", "auth:k", "1")
		require.NoError(t, err)

		// The server now knows the user by another password, and drops
		// its connections, as a restart with a new configuration would.
		_, err = server.Do("ACL", "SETUSER", "app", "resetpass", ">new-pass-3")
		require.NoError(t, err)
		_, err = server.Do("CLIENT", "KILL", "USER", "app")
		require.NoError(t, err)
		down := authCalls(t, c, 300, 10*cfg.Health.Interval, "old-pass-1", "new-pass-3")
		assert.Positive(t, down, "health checks marked the node down (and kept the cause)")

		// Right again: health checks bring the node back.
		_, err = server.Do("ACL", "SETUSER", "app", ">old-pass-1")
		require.NoError(t, err)
		waitFor(t, 5*time.Second, "the node to serve again", func() bool {
			_, err := c.Do(context.Background(), "GET", "auth:k")
			return err == nil
		})
	})
	// With a connection name, the dial's own CLIENT SETNAME meets the
	// NOAUTH before any command does.
	for _, name := range []string{"", "app"} {
		t.Run("password required, none configured, name "+name, func(t *testing.T) {
			server := redistest.StartTB(t, redistest.Options{})
			cfg := ringConfig([]*redistest.Server{server})
			cfg.Pool.ClientName = name
			c := newClient(t, cfg)
			_, err := c.Do(context.Background(), "SET", "auth:k", "1")
			require.NoError(t, err)

			// An operator turns on requirepass and drops the connections;
			// this connection stays logged in to undo it.
			admin, err := redis.Dial("tcp", server.Addr)
			require.NoError(t, err)
			defer admin.Close()
			_, err = admin.Do("CONFIG", "SET", "requirepass", "new-pass-3")
			require.NoError(t, err)
			_, err = admin.Do("CLIENT", "KILL", "TYPE", "normal")
			require.NoError(t, err)
			// Connections dial without AUTH and every command is refused
			// with NOAUTH: that is an authentication failure too.
			down := authCalls(t, c, 300, 10*cfg.Health.Interval, "new-pass-3")
			assert.Positive(t, down, "health checks marked the node down (and kept the cause)")
			_, err = admin.Do("CONFIG", "SET", "requirepass", "")
			require.NoError(t, err)
			waitFor(t, 5*time.Second, "the node to serve again", func() bool {
				_, err := c.Do(context.Background(), "GET", "auth:k")
				return err == nil
			})
		})
	}
	t.Run("cluster node with a rotated password", func(t *testing.T) {
		cluster := redistest.StartClusterTB(t, 3, 0, redistest.Options{Users: []redistest.User{
			{Name: "admin", Password: "admin-pass-0"},
			{Name: "app", Password: "old-pass-1"},
		}})
		cfg := shard.Config{Mode: shard.ModeCluster, Seeds: cluster.Seeds()}
		cfg.Pool = pool.Options{Username: "app", Password: "old-pass-1", DialTimeout: time.Second, ReadTimeout: time.Second}
		cfg.Health = shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 2, Timeout: 200 * time.Millisecond}
		c := newClient(t, cfg)
		node, err := c.Router().Route("auth:k")
		require.NoError(t, err)
		var target *redistest.Server
		for _, s := range cluster.Masters() {
			if s.Addr == node.Addr {
				target = s
			}
		}
		require.NotNil(t, target, "the master of auth:k")
		_, err = c.Do(context.Background(), "SET", "auth:k", "1")
		require.NoError(t, err)

		_, err = target.Do("ACL", "SETUSER", "app", "resetpass", ">new-pass-3")
		require.NoError(t, err)
		_, err = target.Do("CLIENT", "KILL", "USER", "app")
		require.NoError(t, err)
		start := time.Now()
		authCalls(t, c, 200, 10*cfg.Health.Interval, "old-pass-1", "new-pass-3")
		// An authentication failure is not retried: no retry can fix it.
		assert.Less(t, time.Since(start), 3*time.Second, "calls failed at once, not after MaxRetryWait")
		// The other masters serve.
		for i := 0; i < 50; i++ {
			k := "auth:other:" + strings.Repeat("x", i)
			n, err := c.Router().Route(k)
			require.NoError(t, err)
			if n.Addr == node.Addr {
				continue
			}
			_, err = c.Do(context.Background(), "SET", k, i)
			require.NoError(t, err)
		}
	})
}
