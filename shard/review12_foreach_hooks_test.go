package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hookLog records what the hooks saw: the operations (name, node), the
// commands (name, node, outcome) and the pipeline parts (node, commands).
type hookLog struct {
	mu    sync.Mutex
	ops   []string // "NAME@node"
	cmds  []string // "NAME@node:outcome"
	parts []string // "node:commands:outcome"
}

func (l *hookLog) hooks() *shard.Hooks {
	add := func(list *[]string, s string) {
		l.mu.Lock()
		*list = append(*list, s)
		l.mu.Unlock()
	}
	return &shard.Hooks{
		Finish: func(_ context.Context, op *shard.Op) { add(&l.ops, op.Operation()+"@"+op.Node.Addr) },
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			add(&l.cmds, ev.Operation()+"@"+ev.Node.Addr+":"+ev.Outcome.String())
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			add(&l.parts, ev.Node.Addr+":"+itoa(ev.Commands)+":"+ev.Outcome.String())
		},
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func (l *hookLog) reset() {
	l.mu.Lock()
	l.ops, l.cmds, l.parts = nil, nil, nil
	l.mu.Unlock()
}

// TestReview12ForEachShardReportsToTheHooks: every I/O path reported to
// the hooks with its node but ForEachShard (and ForEachMaster,
// ForEachNode): a program that traces with OpenTelemetry saw no span,
// and no duration, for the INFO or FLUSHALL it sent to every node.
// Each command a ForEachShard function sends on its connection is now
// reported as a Conn's: Do, DoContext and DoWithTimeout each an
// operation of one command with its Command event on the node, and the
// commands queued with Send and flushed at once a run whose replies
// Receive reads (a Pipeline event for several).
func TestReview12ForEachShardReportsToTheHooks(t *testing.T) {
	check := func(t *testing.T, c *shard.Client, l *hookLog, nodes []string) {
		ctx := context.Background()
		require.NotEmpty(t, nodes)
		l.reset()
		err := c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
			if _, err := redis.String(conn.Do("INFO", "server")); err != nil {
				return err
			}
			if _, err := redis.DoContext(conn, ctx, "INCR"); err == nil {
				return nil // an error reply is wanted: no key given
			}
			if err := conn.Send("PING"); err != nil {
				return err
			}
			if err := conn.Send("DBSIZE"); err != nil {
				return err
			}
			if err := conn.Flush(); err != nil {
				return err
			}
			for range 2 {
				if _, err := conn.Receive(); err != nil {
					return err
				}
			}
			// redigo's pipelining idiom: Send, Send, Do("").
			if err := conn.Send("PING"); err != nil {
				return err
			}
			if err := conn.Send("ECHO", "x"); err != nil {
				return err
			}
			replies, err := redis.Values(conn.Do(""))
			if err == nil && len(replies) != 2 {
				err = fmt.Errorf("Do(\"\"): %d replies", len(replies))
			}
			return err
		})
		require.NoError(t, err)
		l.mu.Lock()
		defer l.mu.Unlock()
		var wantOps, wantCmds, wantParts []string
		for _, n := range nodes {
			wantOps = append(wantOps, "INFO@"+n, "INCR@"+n, "PIPELINE@"+n, "PIPELINE@"+n)
			wantCmds = append(wantCmds, "INFO@"+n+":ok", "INCR@"+n+":server_error")
			wantParts = append(wantParts, n+":2:ok", n+":2:ok")
		}
		assert.ElementsMatch(t, wantOps, l.ops, "the operations")
		assert.ElementsMatch(t, wantCmds, l.cmds, "the commands")
		assert.ElementsMatch(t, wantParts, l.parts, "the pipeline parts")
	}
	t.Run("ring", func(t *testing.T) {
		servers := redistest.StartNTB(t, 3, redistest.Options{})
		l := &hookLog{}
		cfg := ringConfig(servers)
		cfg.Hooks = l.hooks()
		c := newClient(t, cfg)
		var nodes []string
		for _, s := range servers {
			nodes = append(nodes, s.Addr)
		}
		check(t, c, l, nodes)
	})
	t.Run("cluster", func(t *testing.T) {
		rc := clusterForTest(t)
		l := &hookLog{}
		cfg := clusterConfig(rc.Seeds()...)
		cfg.Hooks = l.hooks()
		c := newClient(t, cfg)
		var nodes []string
		for _, s := range rc.Masters() {
			nodes = append(nodes, s.Addr)
		}
		check(t, c, l, nodes)
	})
}
