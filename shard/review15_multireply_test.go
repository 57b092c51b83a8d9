package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// TestReview15MultiReplyCommandsKeepSharedConnsInStep: SUBSCRIBE,
// PSUBSCRIBE and SSUBSCRIBE of several names and every unsubscribe get
// one reply per name (an unsubscribe even on a connection that has no
// subscription), and MONITOR streams every command the server runs: a
// connection that ran one and is then shared or handed on would give
// its next callers replies that are not theirs (a GET answered with
// another key's value, or with an unsubscribe's confirmation). Do,
// DoKey, a pipeline, a Conn (alone and inside MULTI) and a Tx must
// refuse them with a *ConnStateError that points to the pub/sub API or
// ForEachNode; a ForEachShard function may run them on the connection it
// was lent, which must then not reach anyone else. Meanwhile concurrent
// callers must each read their own values, in ring and cluster mode,
// with and without automatic pipelining.
func TestReview15MultiReplyCommandsKeepSharedConnsInStep(t *testing.T) {
	cmds := [][]any{
		{"UNSUBSCRIBE", "r15mr:a", "r15mr:b", "r15mr:c"},
		{"punsubscribe", "r15mr:a*", "r15mr:b*"},
		{"SUNSUBSCRIBE", "{r15mr}a", "{r15mr}b"},
		{"UNSUBSCRIBE"},
		{"SUBSCRIBE", "r15mr:a", "r15mr:b"},
		{"Psubscribe", "r15mr:a*", "r15mr:b*"},
		{"SSUBSCRIBE", "{r15mr}a", "{r15mr}b"},
		{"MONITOR"},
	}
	type path struct {
		name string
		run  func(ctx context.Context, c *shard.Client, cmd []any) error
	}
	key := "{r15mr}k"
	refusing := []path{
		{"Do", func(ctx context.Context, c *shard.Client, cmd []any) error {
			_, err := c.Do(ctx, cmd[0].(string), cmd[1:]...)
			return err
		}},
		{"DoKey", func(ctx context.Context, c *shard.Client, cmd []any) error {
			_, err := c.DoKey(ctx, key, cmd[0].(string), cmd[1:]...)
			return err
		}},
		{"pipeline", func(ctx context.Context, c *shard.Client, cmd []any) error {
			p := c.Pipeline()
			p.Send(cmd[0].(string), cmd[1:]...)
			p.Send("GET", key)
			res, err := p.Exec(ctx)
			if err != nil {
				return err
			}
			return res[0].Err
		}},
		{"Conn", func(ctx context.Context, c *shard.Client, cmd []any) error {
			conn := c.Conn()
			defer conn.Close()
			_, err := conn.Do(cmd[0].(string), cmd[1:]...)
			return err
		}},
		{"Conn MULTI", func(ctx context.Context, c *shard.Client, cmd []any) error {
			conn := c.Conn()
			defer conn.Close()
			if _, err := conn.Do("MULTI"); err != nil {
				return fmt.Errorf("MULTI: %w", err)
			}
			_, err := conn.Do(cmd[0].(string), cmd[1:]...)
			_, _ = conn.Do("DISCARD")
			return err
		}},
		{"Tx", func(ctx context.Context, c *shard.Client, cmd []any) error {
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				_, err := tx.Do(cmd[0].(string), cmd[1:]...)
				return err
			})
			return err
		}},
	}
	forEach := func(ctx context.Context, c *shard.Client, cmd []any) error {
		return c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
			_, err := redis.DoContext(conn, ctx, cmd[0].(string), cmd[1:]...)
			var re redis.Error
			if errors.As(err, &re) {
				return nil // a server's refusal (SSUBSCRIBE of a slot elsewhere) is fine
			}
			return err
		})
	}

	for _, mode := range ringAndCluster(t) {
		for _, auto := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/auto=%v", mode.name, auto), func(t *testing.T) {
				c := handOnClient(t, mode.cfg, auto)
				ctx := context.Background()

				// Concurrent callers, each on keys of its own, every
				// node's connections shared with the commands below.
				const workers = 6
				var (
					stop   atomic.Bool
					wg     sync.WaitGroup
					mu     sync.Mutex
					wrong  []string
					rounds atomic.Int64
				)
				note := func(s string) {
					mu.Lock()
					if len(wrong) < 10 {
						wrong = append(wrong, s)
					}
					mu.Unlock()
				}
				for w := range workers {
					wg.Go(func() {
						for i := 0; !stop.Load(); i++ {
							k := fmt.Sprintf("r15mr:w%d:%d", w, i%4)
							want := fmt.Sprintf("w%d-%d", w, i)
							if _, err := c.Do(ctx, "SET", k, want); err != nil {
								note(fmt.Sprintf("SET %s: %v", k, err))
								continue
							}
							got, err := redis.String(c.Do(ctx, "GET", k))
							if err != nil || got != want {
								note(fmt.Sprintf("GET %s = %q, %v; want %q", k, got, err, want))
							}
							rounds.Add(1)
						}
					})
				}

				for range 3 {
					for _, cmd := range cmds {
						label := strings.ToUpper(cmd[0].(string))
						for _, p := range refusing {
							err := p.run(ctx, c, cmd)
							what := fmt.Sprintf("%v through %s", cmd, p.name)
							if !assert.ErrorIs(t, err, shard.ErrConnState, what) {
								continue
							}
							var cse *shard.ConnStateError
							require.ErrorAs(t, err, &cse, what)
							assert.Equal(t, label, cse.Command, what)
							if label == "MONITOR" {
								assert.Contains(t, cse.Hint, "ForEachNode", what)
							} else {
								assert.Contains(t, cse.Hint, "Subscribe", what)
							}
						}
						assert.NoError(t, forEach(ctx, c, cmd), "%v through ForEachShard", cmd)
					}
				}
				before := rounds.Load()
				// Let the callers run on the connections given back.
				for rounds.Load() < before+50 && !t.Failed() {
					v, err := redis.String(c.DoKey(ctx, key, "ECHO", "mine"))
					if err != nil || v != "mine" {
						note(fmt.Sprintf("ECHO mine = %q, %v", v, err))
						break
					}
				}
				stop.Store(true)
				wg.Wait()
				assert.Empty(t, wrong, "callers read replies that were not theirs")

				// Every node's connections answer their own commands.
				require.NoError(t, c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
					v, err := redis.String(redis.DoContext(conn, ctx, "ECHO", "own"))
					if err != nil || v != "own" {
						return fmt.Errorf("%s: ECHO own = %q, %v", n.Addr, v, err)
					}
					return nil
				}))
			})
		}
	}
}
