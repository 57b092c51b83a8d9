package shard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// r16BlockedOn reports whether a client of s is blocked in cmd (lower case).
func r16BlockedOn(s *redistest.Server, cmd string) bool {
	list, err := s.Do("CLIENT", "LIST")
	return err == nil && strings.Contains(list, "cmd="+cmd+" ")
}

// TestReview16ForEachShardCloseCutOutcome: a BLPOP sent on a connection
// lent to a ForEachShard function and cut off by Close may have run: its
// Command event and its operation say OutcomeUnknown, as a Do's would.
func TestReview16ForEachShardCloseCutOutcome(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	rec, err := startCloseCut(t, ringConfig(servers), servers, "blpop", "BLPOP", func(c *shard.Client) error {
		return lentDo(c, func(conn redis.Conn) error {
			_, err := conn.Do("BLPOP", "r16lentcut:list", 0)
			return err
		})
	})
	require.ErrorIs(t, err, shard.ErrClosed)
	got := rec.snapshot()
	var found bool
	for _, ev := range got.commands {
		if strings.EqualFold(ev.Name, "blpop") {
			found = true
			assert.Equal(t, shard.OutcomeUnknown, ev.Outcome, "Command event: %v", ev.Err)
			assert.ErrorIs(t, ev.Err, shard.ErrClosed)
		}
	}
	assert.True(t, found, "no Command event for BLPOP")
	for _, op := range got.ops {
		if strings.EqualFold(op.Name, "blpop") {
			assert.Equal(t, shard.OutcomeUnknown, op.Outcome, "operation: %v", op.Err)
		}
	}
}

// TestReview16ForEachShardBlockingWaits: a blocking command sent on a
// connection lent to a ForEachShard function waits for as long as it
// asked the server to block, as Client.Do's does, not for the pool's read
// timeout only: BLPOP with timeout 0 gets the element pushed after the
// read timeout has passed (by Do, DoContext and Send/Flush/Receive), and
// BLPOP with a timeout longer than the read timeout gets its nil reply.
func TestReview16ForEachShardBlockingWaits(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ReadTimeout = readTimeout
	c := newClient(t, cfg)

	send := map[string]func(conn redis.Conn, key string) (any, error){
		"Do": func(conn redis.Conn, key string) (any, error) { return conn.Do("BLPOP", key, 0) },
		"DoContext": func(conn redis.Conn, key string) (any, error) {
			return redis.DoContext(conn, context.Background(), "BLPOP", key, 0)
		},
		"Receive": func(conn redis.Conn, key string) (any, error) {
			if err := conn.Send("BLPOP", key, 0); err != nil {
				return nil, err
			}
			if err := conn.Flush(); err != nil {
				return nil, err
			}
			return conn.Receive()
		},
	}
	checkLentBlockingWaits(t, c, servers[0], readTimeout, "r16lentblock:", send)

	t.Run("timeout", func(t *testing.T) {
		// BLPOP with 1s: the server answers nil after a second, five read
		// timeouts.
		var reply any
		var blErr error
		err := c.ForEachShard(context.Background(), func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
			reply, blErr = conn.Do("BLPOP", "r16lentblock:none", 1)
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, blErr)
		assert.Nil(t, reply)
	})
}

// TestReview16ForEachShardBlockingContext: a blocking command sent with
// DoContext on a connection lent to a ForEachShard function, which waits
// past the read timeout, still ends with its context: at its deadline
// (matching context.DeadlineExceeded) or when it is cancelled (matching
// context.Canceled), the error saying it may have run.
func TestReview16ForEachShardBlockingContext(t *testing.T) {
	const readTimeout = 200 * time.Millisecond
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.ReadTimeout = readTimeout
	c := newClient(t, cfg)

	t.Run("deadline", func(t *testing.T) {
		var blErr error
		var took time.Duration
		err := c.ForEachShard(context.Background(), func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
			dctx, cancel := context.WithTimeout(ctx, 4*readTimeout)
			defer cancel()
			start := time.Now()
			_, blErr = redis.DoContext(conn, dctx, "BLPOP", "r16lentctx:deadline", 0)
			took = time.Since(start)
			return nil
		})
		require.NoError(t, err)
		require.ErrorIs(t, blErr, context.DeadlineExceeded)
		assert.GreaterOrEqual(t, took, 4*readTimeout, "BLPOP ended before its context's deadline")
	})

	t.Run("cancel", func(t *testing.T) {
		cctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			done <- lentDo(c, func(conn redis.Conn) error {
				_, err := redis.DoContext(conn, cctx, "BLPOP", "r16lentctx:cancel", 0)
				return err
			})
		}()
		start := time.Now()
		waitFor(t, 15*time.Second, "BLPOP blocked past the read timeout", func() bool {
			return time.Since(start) > 3*readTimeout && r16BlockedOn(servers[0], "blpop")
		})
		cancel()
		select {
		case err := <-done:
			require.ErrorIs(t, err, context.Canceled)
			assert.Contains(t, err.Error(), "may have run")
		case <-time.After(15 * time.Second):
			t.Fatal("BLPOP did not return after its context was cancelled")
		}
		waitFor(t, 15*time.Second, "the server to forget the BLPOP", func() bool { return !r16BlockedOn(servers[0], "blpop") })
	})
}

// TestReview16ClusterCloseCutOperationOutcome: the same as
// TestReview16CloseCutOperationOutcome in cluster mode: a BLPOP cut off
// by Close is OutcomeUnknown in its Command event and its operation.
func TestReview16ClusterCloseCutOperationOutcome(t *testing.T) {
	rc := clusterForTest(t)
	rec, err := startCloseCut(t, clusterConfig(rc.Seeds()[0]), rc.Masters(), "blpop", "BLPOP", func(c *shard.Client) error {
		_, err := c.Do(context.Background(), "BLPOP", "r16clustercut:list", 0)
		return err
	})
	require.ErrorIs(t, err, shard.ErrClosed)
	got := rec.snapshot()
	require.Len(t, got.ops, 1)
	assert.Equal(t, shard.OutcomeUnknown, got.ops[0].Outcome, "operation: %v", got.ops[0].Err)
	var found bool
	for _, ev := range got.commands {
		if strings.EqualFold(ev.Name, "blpop") {
			found = true
			assert.Equal(t, shard.OutcomeUnknown, ev.Outcome, "Command event: %v", ev.Err)
		}
	}
	assert.True(t, found, "no Command event for BLPOP")
}

// checkLentBlockingWaits runs each of send's ways of sending a BLPOP on a
// connection lent to a ForEachShard function of c, whose pool's read
// timeout is readTimeout, and checks that it is still blocked on srv
// after three read timeouts and returns the element pushed then.
func checkLentBlockingWaits(t *testing.T, c *shard.Client, srv *redistest.Server, readTimeout time.Duration, keyPrefix string, send map[string]func(conn redis.Conn, key string) (any, error)) {
	t.Helper()
	for name, do := range send {
		t.Run(name, func(t *testing.T) {
			key := keyPrefix + name
			type result struct {
				reply any
				err   error
			}
			done := make(chan result, 1)
			sent := make(chan time.Time, 1)
			go func() {
				var r result
				err := c.ForEachShard(context.Background(), func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
					sent <- time.Now()
					r.reply, r.err = do(conn, key)
					return nil
				})
				if r.err == nil {
					r.err = err
				}
				done <- r
			}()
			var at time.Time
			select {
			case at = <-sent:
			case <-time.After(15 * time.Second):
				t.Fatal("ForEachShard did not call fn")
			}
			// Wait until well past the read timeout with BLPOP still
			// blocked (or failed, before the fix).
			var early *result
			waitFor(t, 15*time.Second, "three read timeouts to pass", func() bool {
				select {
				case r := <-done:
					early = &r
					return true
				default:
				}
				return time.Since(at) > 3*readTimeout && r16BlockedOn(srv, "blpop")
			})
			require.Nil(t, early, "BLPOP returned before anything was pushed: %+v", early)
			_, err := srv.Do("RPUSH", key, "elem")
			require.NoError(t, err)
			select {
			case r := <-done:
				require.NoError(t, r.err)
				got, err := redis.Strings(r.reply, nil)
				require.NoError(t, err)
				assert.Equal(t, []string{key, "elem"}, got)
			case <-time.After(15 * time.Second):
				t.Fatal("BLPOP did not return after the push")
			}
		})
	}
}
