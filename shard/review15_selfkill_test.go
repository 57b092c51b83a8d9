package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview15SelfClosingCommandsLeaveOtherCallersAlone: commands after
// which the server closes the very connection that sent them (CLIENT
// KILL USER of the connection's own user, SKIPME no; ACL DELUSER of the
// connection's own user; QUIT) run, through the client, on a connection
// no other caller's command shares, and that connection is never handed
// on: many goroutines doing SET and GET on the same node, through the
// automatic pipelines, all the while, see no error at all, and the
// self-closing commands get their own replies.
func TestReview15SelfClosingCommandsLeaveOtherCallersAlone(t *testing.T) {
	for _, mode := range ringAndCluster(t) {
		t.Run(mode.name, func(t *testing.T) {
			cfg := mode.cfg
			c := newClient(t, cfg)
			shard.AlwaysPipeline(c) // every single GET and SET shares the pipelines' connections
			ctx := context.Background()
			user := "r15selfkill" + mode.name
			key := "{r15selfkill}" + mode.name // every command below goes to this key's node
			setUser := func() error {
				_, err := c.DoKey(ctx, key, "ACL", "SETUSER", user, "reset", "on", ">r15pw", "+@all", "~*", "&*")
				return err
			}
			require.NoError(t, setUser())
			t.Cleanup(func() { _, _ = c.DoKey(context.Background(), key, "ACL", "DELUSER", user) })

			// Each self-closing command, as the connection's own user.
			type killer struct {
				name string
				run  func() error
			}
			asUser := func(cmd string, args ...any) func() error {
				return func() error {
					p := c.Pipeline()
					p.SendKey(key, "AUTH", user, "r15pw")
					p.SendKey(key, cmd, args...)
					res, err := p.Exec(ctx)
					if err != nil {
						return err
					}
					for _, r := range res {
						if r.Err != nil {
							return r.Err
						}
					}
					if n, err := redis.Int(res[1].Reply, nil); err != nil || n != 1 {
						return fmt.Errorf("%s %v = %v, %v; want 1", cmd, args, res[1].Reply, err)
					}
					return nil
				}
			}
			killers := []killer{
				{"CLIENT KILL USER self", asUser("CLIENT", "KILL", "USER", user, "SKIPME", "no")},
				{"ACL DELUSER self", func() error {
					if err := asUser("ACL", "DELUSER", user)(); err != nil {
						return err
					}
					return setUser()
				}},
				// Through DoKey alone, a connection can only name itself by
				// its ID or address, learnt by the command before: the pool
				// hands the caller's connection back to it, the one it
				// gave back last.
				{"CLIENT KILL ID self SKIPME no", func() error {
					id, err := redis.Int64(c.DoKey(ctx, key, "CLIENT", "ID"))
					if err != nil {
						return err
					}
					if n, err := redis.Int(c.DoKey(ctx, key, "CLIENT", "KILL", "ID", id, "SKIPME", "no")); err != nil || n != 1 {
						return fmt.Errorf("CLIENT KILL ID = %d, %v; want 1", n, err)
					}
					return nil
				}},
				{"CLIENT KILL addr", func() error {
					info, err := redis.String(c.DoKey(ctx, key, "CLIENT", "INFO"))
					if err != nil {
						return err
					}
					var addr string
					for _, f := range strings.Fields(info) {
						if a, ok := strings.CutPrefix(f, "addr="); ok {
							addr = a
						}
					}
					if r, err := redis.String(c.DoKey(ctx, key, "CLIENT", "KILL", addr)); err != nil || r != "OK" {
						return fmt.Errorf("CLIENT KILL addr = %q, %v", r, err)
					}
					return nil
				}},
				{"QUIT", func() error {
					r, err := redis.String(c.DoKey(ctx, key, "QUIT"))
					if err != nil || r != "OK" {
						return fmt.Errorf("QUIT = %q, %v", r, err)
					}
					return nil
				}},
			}

			const workers, rounds, kills = 32, 400, 60
			var (
				stop      atomic.Bool
				failures  atomic.Int64
				firstMu   sync.Mutex
				firstErrs []string
				ops       atomic.Int64
			)
			fail := func(what string, err error) {
				failures.Add(1)
				firstMu.Lock()
				if len(firstErrs) < 5 {
					firstErrs = append(firstErrs, fmt.Sprintf("%s: %v", what, err))
				}
				firstMu.Unlock()
			}
			var wg sync.WaitGroup
			for g := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < rounds || !stop.Load(); i++ {
						k := fmt.Sprintf("%s:%d:%d", key, g, i%50)
						v := fmt.Sprintf("v%d", i)
						if _, err := c.Do(ctx, "SET", k, v); err != nil {
							fail("SET", err)
							continue
						}
						got, err := redis.String(c.Do(ctx, "GET", k))
						if err != nil || got != v {
							fail("GET", fmt.Errorf("%q, %w", got, err))
						}
						ops.Add(2)
					}
				}()
			}
			defer func() { // also when waitFor gives up
				stop.Store(true)
				wg.Wait()
			}()
			// The pipelines hold their connections from the first commands
			// on: the self-closing commands' pooled ones are others.
			waitFor(t, 30*time.Second, "the workers under way", func() bool { return ops.Load() >= 2*workers })
			var killErrs []string
			for i := range kills {
				k := killers[i%len(killers)]
				if err := k.run(); err != nil {
					killErrs = append(killErrs, fmt.Sprintf("%s: %v", k.name, err))
				}
			}
			stop.Store(true)
			wg.Wait()
			assert.Empty(t, killErrs, "the self-closing commands' own results")
			firstMu.Lock()
			defer firstMu.Unlock()
			assert.Zero(t, failures.Load(), "other callers' commands failed (of %d): %v", ops.Load(), firstErrs)
		})
	}
}
