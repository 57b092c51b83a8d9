package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview14ConnBlockingAfterRefusedMultiIsLeftToReceive: a Conn's
// Flush leaves a blocking command (BLPOP ... 0) to the Receive that asks
// for its reply, so that Receive's timeout bounds the wait, except
// inside MULTI, where the server only queues it. But the server queues
// it only if it accepted the MULTI: after one it refused (here its ACL
// user may not run MULTI) the BLPOP blocks, and Flush, which took it for
// a queued one, waited for its reply for the whole read timeout (a
// minute here, forever with none), where ReceiveWithTimeout's 300 ms
// should have applied. A blocking command inside MULTI counts as queued
// only once MULTI's +OK was read. (When the Conn had answered the MULTI
// itself, before any key, the server's refusal of it fails the BLPOP,
// which is then not sent at all.)
func TestReview14ConnBlockingAfterRefusedMultiIsLeftToReceive(t *testing.T) {
	c, server := noMultiRing(t)

	const q = "r14rmc:q"
	tests := []struct {
		name string
		// before sends what comes before the BLPOP; it returns how many
		// replies precede the BLPOP's once the BLPOP is flushed.
		before func(t *testing.T, conn redis.Conn) int
	}{
		{"WATCH, refused MULTI read", func(t *testing.T, conn redis.Conn) int {
			_, err := conn.Do("WATCH", "r14rmc:w")
			require.NoError(t, err)
			_, err = conn.Do("MULTI")
			require.Error(t, err)
			require.Contains(t, err.Error(), "NOPERM")
			return 0
		}},
		{"MULTI answered before any key", func(t *testing.T, conn redis.Conn) int {
			_, err := conn.Do("MULTI")
			require.NoError(t, err) // the Conn's own answer: no key known yet
			return 0
		}},
		{"MULTI sent with it", func(t *testing.T, conn redis.Conn) int {
			require.NoError(t, conn.Send("MULTI"))
			return 1
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := c.Conn()
			defer conn.Close()
			skip := tt.before(t, conn)
			require.NoError(t, conn.Send("BLPOP", q, 0))
			type result struct {
				flush, pop error
			}
			done := make(chan result, 1)
			go func() {
				if err := conn.Flush(); err != nil {
					done <- result{flush: err}
					return
				}
				for range skip {
					redis.ReceiveWithTimeout(conn, 10*time.Second)
				}
				_, popErr := redis.ReceiveWithTimeout(conn, 300*time.Millisecond)
				done <- result{pop: popErr}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(20 * time.Second):
				// Let the BLPOP go, then fail.
				_, err := server.Do("RPUSH", q, "x")
				require.NoError(t, err)
				<-done
				_, err = server.Do("DEL", q)
				require.NoError(t, err)
				t.Fatal("Flush waited for the BLPOP after a refused MULTI: ReceiveWithTimeout's timeout did not apply")
			}
			require.NoError(t, r.flush)
			require.Error(t, r.pop)
			if tt.name == "WATCH, refused MULTI read" {
				require.True(t, errors.Is(r.pop, context.DeadlineExceeded), "%v", r.pop)
			} else {
				// The Conn had answered MULTI itself: the server's
				// refusal of it fails the BLPOP its caller takes for
				// queued, which is not sent (it would run at once).
				requireNoPerm(t, r.pop, "BLPOP after a refused MULTI the Conn answered")
				_, err := conn.Do("DISCARD") // the caller's transaction ends
				require.NoError(t, err)
			}
			// The BLPOP is no longer waiting on the server: an element
			// pushed now stays in the list.
			waitFor(t, 10*time.Second, "the BLPOP to leave the server", func() bool {
				info, err := server.Do("INFO", "clients")
				require.NoError(t, err)
				return strings.Contains(info, "blocked_clients:0\r\n")
			})
			_, err := server.Do("RPUSH", q, "x")
			require.NoError(t, err)
			n, err := server.Do("LLEN", q)
			require.NoError(t, err)
			require.Equal(t, "1", n, "a BLPOP left blocked popped the element")
			_, err = server.Do("DEL", q)
			require.NoError(t, err)

			// Nothing was watched on the connection the BLPOP's timeout
			// closed: the Conn's next transaction runs (it would be
			// refused for watched keys lost with that connection).
			_, err = server.Do("ACL", "SETUSER", "nomulti", "+multi")
			require.NoError(t, err)
			defer server.Do("ACL", "SETUSER", "nomulti", "-multi")
			if tt.name == "WATCH, refused MULTI read" {
				return // there, a key was watched: the refusal is right
			}
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send("SET", "r14rmc:k", "v"))
			replies, err := redis.Values(conn.Do("EXEC"))
			require.NoError(t, err, "the next transaction of the Conn")
			require.Equal(t, []any{"OK"}, replies)
		})
	}
}

// TestReview14RefusedMultiLeavesNoWatchToTheNextCaller: keys watched
// before a MULTI that the server refused (its ACL user may not run
// MULTI) stay watched, the EXEC after it being refused too. A Conn, a
// ForEachShard function and a Tx give their connection back to the pool,
// which took that EXEC for the end of the watch and handed the
// connection on: the next transaction on it failed (EXEC answered nil)
// because another client changed a key the previous caller had watched.
// So too when the EXEC was sent with the MULTI, before its refusal was
// read.
func TestReview14RefusedMultiLeavesNoWatchToTheNextCaller(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	cfg := ringConfig([]*redistest.Server{server})
	cfg.Pool.Username, cfg.Pool.Password = "nomulti", "nomultipw"
	cfg.Health.Interval = -1
	const watched = "r14rmw:w"
	ctx := context.Background()
	firsts := []struct {
		name string
		run  func(t *testing.T, c *shard.Client)
	}{
		{"Conn", func(t *testing.T, c *shard.Client) {
			conn := c.Conn()
			defer conn.Close()
			_, err := conn.Do("WATCH", watched)
			require.NoError(t, err)
			_, err = conn.Do("MULTI")
			require.ErrorContains(t, err, "NOPERM")
			_, err = conn.Do("EXEC")
			require.Error(t, err)
		}},
		{"ForEachShard", func(t *testing.T, c *shard.Client) {
			err := c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
				if _, err := conn.Do("WATCH", watched); err != nil {
					return err
				}
				if _, err := conn.Do("MULTI"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
					return fmt.Errorf("MULTI = %v, want the server's NOPERM refusal", err)
				}
				conn.Do("EXEC") // refused: no transaction
				return nil
			})
			require.NoError(t, err)
		}},
		// MULTI and EXEC sent together: the EXEC went out before the
		// MULTI's refusal was read.
		{"Conn, MULTI and EXEC sent together", func(t *testing.T, c *shard.Client) {
			conn := c.Conn()
			defer conn.Close()
			_, err := conn.Do("WATCH", watched)
			require.NoError(t, err)
			require.NoError(t, conn.Send("MULTI"))
			_, err = conn.Do("EXEC")
			require.ErrorContains(t, err, "NOPERM")
		}},
		{"ForEachShard, MULTI and EXEC sent together", func(t *testing.T, c *shard.Client) {
			err := c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
				if _, err := conn.Do("WATCH", watched); err != nil {
					return err
				}
				for _, cmd := range []string{"MULTI", "EXEC"} {
					if err := conn.Send(cmd); err != nil {
						return err
					}
				}
				if err := conn.Flush(); err != nil {
					return err
				}
				_, multiErr := conn.Receive()
				_, execErr := conn.Receive()
				if multiErr == nil || execErr == nil {
					t.Errorf("MULTI = %v, EXEC = %v: want both refused", multiErr, execErr)
				}
				return nil
			})
			require.NoError(t, err)
		}},
		{"Tx", func(t *testing.T, c *shard.Client) {
			_, err := c.Tx(ctx, []string{watched}, func(tx *shard.Tx) error {
				return tx.Queue("SET", watched+":q", "v")
			})
			requireNoPerm(t, err, "the Tx's refused MULTI")
		}},
	}
	nexts := []struct {
		name string
		run  func(c *shard.Client) (any, error)
	}{
		{"Conn", func(c *shard.Client) (any, error) {
			conn := c.Conn()
			defer conn.Close()
			conn.Send("MULTI")
			conn.Send("SET", watched+":next", "v")
			return conn.Do("EXEC")
		}},
		{"ForEachShard", func(c *shard.Client) (any, error) {
			var reply any
			err := c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
				conn.Send("MULTI")
				conn.Send("SET", watched+":next", "v")
				var err error
				reply, err = conn.Do("EXEC")
				return err
			})
			return reply, err
		}},
	}
	for _, first := range firsts {
		for _, next := range nexts {
			t.Run(first.name+" then "+next.name, func(t *testing.T) {
				_, err := server.Do("ACL", "SETUSER", "nomulti", "on", ">nomultipw", "~*", "&*", "+@all", "-multi")
				require.NoError(t, err)
				c := newClient(t, cfg)
				first.run(t, c)

				_, err = server.Do("ACL", "SETUSER", "nomulti", "+multi")
				require.NoError(t, err)
				_, err = server.Do("INCR", watched)
				require.NoError(t, err)
				reply, err := next.run(c)
				require.NoError(t, err, "the next transaction failed: the key the previous caller watched is still watched on its connection")
				require.Equal(t, []any{"OK"}, reply)
			})
		}
	}
}
