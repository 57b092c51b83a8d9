package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// r21Word is an argument of a type of the caller's own that is neither a
// string nor a number: redigo sends what fmt prints for it, its String
// method's text.
type r21Word struct{ s string }

func (w r21Word) String() string { return w.s }

// TestReview21StringerSubcommandLeavesNoState: CLIENT SETNAME, CLIENT
// TRACKING and CLIENT NO-EVICT with the subcommand given as a Stringer
// (the server receives its text) through DoKey, a pipeline and a
// ForEachShard callback, on a client whose pool holds one connection:
// the next caller's connection has the configured name and no flags, as
// a fresh one has.
func TestReview21StringerSubcommandLeavesNoState(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.MaxActive = 1
	cfg.Pool.Wait = true
	subs := [][]any{
		{r21Word{"SETNAME"}, "intruder"},
		{r21Word{"TRACKING"}, "on", "BCAST"},
		{r21Word{"NO-EVICT"}, "on"},
	}
	ways := map[string]func(c *shard.Client, args []any) error{
		"DoKey": func(c *shard.Client, args []any) error {
			_, err := c.DoKey(context.Background(), "r21", "CLIENT", args...)
			return err
		},
		"pipeline": func(c *shard.Client, args []any) error {
			p := c.Pipeline()
			p.SendKey("r21", "CLIENT", args...)
			res, err := p.Exec(context.Background())
			if err == nil && len(res) == 1 {
				err = res[0].Err
			}
			return err
		},
		"ForEachShard": func(c *shard.Client, args []any) error {
			return c.ForEachShard(context.Background(), func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
				_, err := conn.Do("CLIENT", args...)
				return err
			})
		},
	}
	for _, mode := range []string{"pooled", "auto"} {
		cfg := cfg
		cfg.DisableAutoPipeline = mode == "pooled"
		name := "r21" + mode // each client's connections by name
		cfg.Pool.ClientName = name
		c := newClient(t, cfg)
		if mode == "auto" {
			shard.AlwaysPipeline(c)
		}
		for way, run := range ways {
			for _, args := range subs {
				t.Run(fmt.Sprintf("%s/%s/%v", mode, way, args[0]), func(t *testing.T) {
					require.NoError(t, run(c, args))
					require.NoError(t, c.ForEachShard(context.Background(), func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
						info, err := redis.String(conn.Do("CLIENT", "INFO"))
						if err != nil {
							return err
						}
						for _, w := range []string{" name=" + name + " ", " flags=N ", " redir=-1 "} {
							if !strings.Contains(info, w) {
								return fmt.Errorf("the next caller's connection is not fresh: CLIENT INFO %q lacks %q", info, w)
							}
						}
						return nil
					}))
					// The connections the callers left go away: one is pooled.
					deadline := time.Now().Add(20 * time.Second)
					for {
						list, err := clientList(servers[0])
						require.NoError(t, err)
						n := 0
						for _, ci := range list {
							if ci["name"] == name || ci["name"] == "intruder" {
								n++
							}
						}
						if n <= 1 || time.Now().After(deadline) {
							require.LessOrEqual(t, n, 1, "connections of the client left open")
							break
						}
						time.Sleep(10 * time.Millisecond) // polling the server
					}
				})
			}
		}
	}
}
