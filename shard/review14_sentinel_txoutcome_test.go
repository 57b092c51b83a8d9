package shard_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// attemptLog records the outcome and server of every attempt the Command
// and Pipeline hooks see, as "name outcome server" (a pipeline part by
// its operation, MULTI for a transaction's batch).
type attemptLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *attemptLog) hooks() *shard.Hooks {
	return &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.seen = append(l.seen, strings.ToUpper(ev.Name)+" "+ev.Outcome.String()+" "+ev.ServerAddr)
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.seen = append(l.seen, ev.Operation()+" "+ev.Outcome.String()+" "+ev.ServerAddr)
		},
	}
}

func (l *attemptLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = nil
}

func (l *attemptLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// TestReview14SentinelTxRetriedAttemptIsARetry: with FailoverWait, an
// attempt of a transaction on a Sentinel shard that its demoted master
// refused (READONLY) is sent again at the new master, as a command is;
// the hooks call both attempts what they were: the first a retry on the
// old master, as they call a command's, not a server error that stands
// (which metrics count as a failure, and which no retries counter sees).
func TestReview14SentinelTxRetriedAttemptIsARetry(t *testing.T) {
	for _, tc := range []struct {
		name  string
		run   func(ctx context.Context, c *shard.Client) error
		first string // the operation of the refused attempt's event
		kill  bool   // the master is killed (a Sentinel failover), not demoted
	}{
		{"Do", func(ctx context.Context, c *shard.Client) error {
			_, err := c.Do(ctx, "SET", "r14txo", "2")
			return err
		}, "SET", false},
		{"Tx", func(ctx context.Context, c *shard.Client) error {
			_, err := c.Tx(ctx, []string{"r14txo"}, func(tx *shard.Tx) error {
				return tx.Queue("SET", "r14txo", "2")
			})
			return err
		}, "MULTI", false},
		{"Tx killed master", func(ctx context.Context, c *shard.Client) error {
			_, err := c.Tx(ctx, []string{"r14txo"}, func(tx *shard.Tx) error {
				return tx.Queue("SET", "r14txo", "2")
			})
			return err
		}, "WATCH", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := sentinelSetOptions(1)
			o.Sentinels = 1
			set := redistest.StartSentinelsTB(t, o)
			cfg := sentinelConfig(set)
			cfg.Sentinel.RefreshInterval = -1
			cfg.Sentinel.FailoverWait = 60 * time.Second
			log := &attemptLog{}
			cfg.Hooks = log.hooks()
			c := newClient(t, cfg)
			ctx := context.Background()
			_, err := c.Do(ctx, "SET", "r14txo", "1")
			require.NoError(t, err)

			old, next := shardServers(t, set, 0)
			if tc.kill {
				require.NoError(t, old.Kill()) // the Sentinel promotes the replica
			} else {
				require.NoError(t, set.Sentinels[0].Kill()) // only the demoted master's READONLY tells
				swapRoles(t, old, next)
			}

			log.reset()
			require.NoError(t, tc.run(ctx, c))
			seen := log.list()
			require.NotEmpty(t, seen)
			var refused []string
			for _, s := range seen {
				if strings.HasPrefix(s, tc.first+" ") && strings.HasSuffix(s, " "+old.Addr) {
					refused = append(refused, s)
				}
			}
			require.NotEmpty(t, refused, "an attempt on the demoted master %s was reported: %q", old.Addr, seen)
			for _, s := range refused {
				assert.Equal(t, tc.first+" retry "+old.Addr, s, "all attempts: %q", seen)
			}
			last := "MULTI"
			if tc.name == "Do" {
				last = "SET"
			}
			assert.Equal(t, last+" ok "+next.Addr, seen[len(seen)-1], "all attempts: %q", seen)
		})
	}
}
