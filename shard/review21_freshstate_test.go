package shard_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// r21Case is what a caller does through the public API before the next
// caller borrows the node's only pooled connection.
type r21Case struct {
	name string
	run  func(t *testing.T, c *shard.Client, key string)
}

// r21Lent runs steps on the connection a ForEachShard callback is lent.
func r21Lent(steps func(ctx context.Context, conn redis.Conn)) func(t *testing.T, c *shard.Client, key string) {
	return func(t *testing.T, c *shard.Client, key string) {
		require.NoError(t, c.ForEachShard(context.Background(), func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
			steps(ctx, conn)
			return nil
		}))
	}
}

// r21Cancel returns a context cancelled (not timed out) once the server
// shows a client blocked, so that the cancellation lands mid-wait.
func r21Cancel(t *testing.T, srv *redistest.Server) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer cancel()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			select {
			case <-done:
				return
			default:
			}
			list, err := clientList(srv)
			if err == nil {
				for _, ci := range list {
					if ci["cmd"] == "blpop" && strings.Contains(ci["flags"], "b") {
						return
					}
				}
			}
			time.Sleep(5 * time.Millisecond) // polling the server, not synchronising
		}
	}()
	return ctx, func() { close(done); cancel() }
}

// TestReview21NextCallerGetsFreshConn: whatever a caller does through
// the public API (a ForEachShard callback's connection, Do, a pipeline,
// Tx) before it lets go of the node's only pooled connection, including
// giving up in the middle of a blocking wait or of a pipeline's replies,
// the next caller's connection is in the state a fresh one has: RESP2,
// the default user, database 0, the configured name, no flags (no
// tracking, no no-evict, no readonly), nothing subscribed, no
// transaction, and it answers its own commands. The connections and
// goroutines the callers leave behind go away.
func TestReview21NextCallerGetsFreshConn(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	srv := servers[0]
	_, err := srv.Do("ACL", "SETUSER", "alt", "on", ">altpw", "~*", "&*", "+@all")
	require.NoError(t, err)
	cfg := ringConfig(servers)
	cfg.Pool.ClientName = stateClientName
	cfg.Pool.MaxActive = 1
	cfg.Pool.Wait = true
	cfg.Pool.ReadTimeout = 2 * time.Second
	for _, mode := range []string{"pooled", "auto"} {
		t.Run(mode, func(t *testing.T) {
			cfg := cfg
			cfg.DisableAutoPipeline = mode == "pooled"
			c := newClient(t, cfg)
			if mode == "auto" {
				shard.AlwaysPipeline(c)
			}
			r21FreshAfterEach(t, srv, c)
		})
	}
}

// r21FreshAfterEach runs every case on c, whose pool holds one
// connection to srv, and checks the next caller's connection after each.
func r21FreshAfterEach(t *testing.T, srv *redistest.Server, c *shard.Client) {
	cases := []r21Case{
		{"lent SUBSCRIBE read", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("SUBSCRIBE", "a", "b") })},
		{"lent PSUBSCRIBE read", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("PSUBSCRIBE", "a*") })},
		{"lent SSUBSCRIBE read", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("SSUBSCRIBE", "s") })},
		{"lent SUBSCRIBE UNSUBSCRIBE", r21Lent(func(ctx context.Context, conn redis.Conn) {
			conn.Do("SUBSCRIBE", "a")
			conn.Send("UNSUBSCRIBE", "a")
			conn.Flush()
		})},
		{"lent MONITOR", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("MONITOR") })},
		{"lent HELLO 3 read", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("HELLO", 3) })},
		{"lent AUTH alt", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("AUTH", "alt", "altpw") })},
		{"lent CLIENT SETNAME", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("CLIENT", "SETNAME", "intruder") })},
		{"lent CLIENT NO-EVICT", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("CLIENT", "NO-EVICT", "on") })},
		{"lent CLIENT TRACKING BCAST", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("CLIENT", "TRACKING", "on", "BCAST") })},
		{"lent READONLY READWRITE", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("READONLY"); conn.Do("READWRITE") })},
		{"lent SELECT", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("SELECT", 3) })},
		{"lent CLIENT REPLY OFF Do", r21Lent(func(ctx context.Context, conn redis.Conn) {
			cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			redis.DoContext(conn, cctx, "CLIENT", "REPLY", "OFF")
		})},
		{"lent MULTI no EXEC", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("MULTI"); conn.Do("SET", "r21:k", "x") })},
		{"lent WATCH no EXEC", r21Lent(func(ctx context.Context, conn redis.Conn) { conn.Do("WATCH", "r21:k") })},
		{"lent BLPOP cancelled", func(t *testing.T, c *shard.Client, key string) {
			ctx, stop := r21Cancel(t, srv)
			defer stop()
			r21Lent(func(_ context.Context, conn redis.Conn) {
				_, err := redis.DoContext(conn, ctx, "BLPOP", "r21:empty", 0)
				if !errors.Is(err, context.Canceled) {
					t.Errorf("BLPOP cancelled: %v", err)
				}
			})(t, c, key)
		}},
		{"lent pipeline half read, cancelled", func(t *testing.T, c *shard.Client, key string) {
			ctx, stop := r21Cancel(t, srv)
			defer stop()
			r21Lent(func(_ context.Context, conn redis.Conn) {
				for i := range 3 {
					conn.Send("SET", fmt.Sprintf("r21:p%d", i), i)
				}
				conn.Send("BLPOP", "r21:empty", 0)
				conn.Send("PING")
				conn.Flush()
				for range 3 {
					if _, err := conn.Receive(); err != nil {
						t.Errorf("Receive: %v", err)
					}
				}
				if _, err := redis.ReceiveContext(conn, ctx); !errors.Is(err, context.Canceled) {
					t.Errorf("ReceiveContext cancelled: %v", err)
				}
			})(t, c, key)
		}},
		{"lent pipeline half read, given back", r21Lent(func(_ context.Context, conn redis.Conn) {
			for i := range 4 {
				conn.Send("SET", fmt.Sprintf("r21:q%d", i), i)
			}
			conn.Send("BLPOP", "r21:empty", 0)
			conn.Flush()
			conn.Receive()
			conn.Receive()
		})},
		{"Do BLPOP cancelled", func(t *testing.T, c *shard.Client, key string) {
			ctx, stop := r21Cancel(t, srv)
			defer stop()
			_, err := c.Do(ctx, "BLPOP", "r21:empty", 0)
			require.ErrorIs(t, err, context.Canceled)
		}},
		{"pipeline BLPOP cancelled half read", func(t *testing.T, c *shard.Client, key string) {
			ctx, stop := r21Cancel(t, srv)
			defer stop()
			p := c.Pipeline()
			p.Send("SET", "r21:a", 1)
			p.Send("GET", "r21:a")
			p.Send("BLPOP", "r21:empty", 0)
			p.Send("GET", "r21:a")
			res, err := p.Exec(ctx)
			_ = err
			require.Len(t, res, 4)
			require.ErrorIs(t, res[2].Err, context.Canceled)
		}},
		{"Do CLIENT SETNAME", func(t *testing.T, c *shard.Client, key string) {
			_, err := c.DoKey(context.Background(), key, "CLIENT", "SETNAME", "intruder")
			require.NoError(t, err)
		}},
		{"Do AUTH alt", func(t *testing.T, c *shard.Client, key string) {
			_, err := c.DoKey(context.Background(), key, "AUTH", "alt", "altpw")
			require.NoError(t, err)
		}},
		{"Tx CLIENT SETNAME", func(t *testing.T, c *shard.Client, key string) {
			_, err := c.Tx(context.Background(), []string{key}, func(tx *shard.Tx) error {
				if _, err := tx.Do("CLIENT", "SETNAME", "intruder"); err != nil {
					return err
				}
				return tx.Queue("SET", key, "v")
			})
			require.NoError(t, err)
		}},
		{"Tx BLPOP cancelled", func(t *testing.T, c *shard.Client, key string) {
			ctx, stop := r21Cancel(t, srv)
			defer stop()
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				_, err := tx.Do("BLPOP", key+":list", 0)
				return err
			})
			require.ErrorIs(t, err, context.Canceled)
		}},
		{"Tx returns error", func(t *testing.T, c *shard.Client, key string) {
			_, err := c.Tx(context.Background(), []string{key}, func(tx *shard.Tx) error {
				if err := tx.Queue("SET", key, "v"); err != nil {
					return err
				}
				return errors.New("abandon")
			})
			require.Error(t, err)
		}},
	}

	ctx := context.Background()
	probe := func(t *testing.T) (id string) {
		t.Helper()
		require.NoError(t, c.ForEachShard(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
			info, err := redis.String(conn.Do("CLIENT", "INFO"))
			if err != nil {
				return fmt.Errorf("CLIENT INFO: %w", err)
			}
			ci := clientInfo{}
			for _, f := range strings.Fields(info) {
				if k, v, ok := strings.Cut(f, "="); ok {
					ci[k] = v
				}
			}
			want := map[string]string{"flags": "N", "db": "0", "multi": "-1", "name": stateClientName,
				"resp": "2", "user": "default", "sub": "0", "psub": "0", "redir": "-1"}
			if _, ok := ci["ssub"]; ok {
				want["ssub"] = "0"
			}
			for k, v := range want {
				if ci[k] != v {
					return fmt.Errorf("not fresh: %s=%q, want %q: %s", k, ci[k], v, info)
				}
			}
			id = ci["id"]
			if v, err := redis.String(conn.Do("ECHO", "mine")); err != nil || v != "mine" {
				return fmt.Errorf("ECHO = %q, %v: a reply left over or missing", v, err)
			}
			return nil
		}))
		return id
	}
	// ours counts the client's connections on the server.
	ours := func() int {
		list, err := clientList(srv)
		require.NoError(t, err)
		n := 0
		for _, ci := range list {
			if ci["name"] == stateClientName || ci["name"] == "intruder" || ci["user"] == "alt" {
				n++
			}
		}
		return n
	}
	probe(t)
	baseGoroutines := runtime.NumGoroutine()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := probe(t)
			tc.run(t, c, "r21key")
			after := probe(t)
			t.Logf("connection before %s, after %s", before, after)
			deadline := time.Now().Add(20 * time.Second)
			for ours() > 1 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond) // polling the server
			}
			if n := ours(); n > 1 {
				t.Errorf("%d connections of the client on the server, want 1 (the pool holds one)", n)
			}
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > baseGoroutines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseGoroutines {
		t.Errorf("%d goroutines, %d before the callers", n, baseGoroutines)
	}
}
