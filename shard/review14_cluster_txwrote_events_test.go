package shard_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// txEventLog records, for each Command and Pipeline event, its name (MULTI
// for a transaction's batch), outcome and redirects, and the operation's
// final outcome.
type txEventLog struct {
	mu    sync.Mutex
	seen  []string
	final []shard.Outcome
}

func (l *txEventLog) hooks() *shard.Hooks {
	return &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			l.mu.Lock()
			defer l.mu.Unlock()
			s := strings.ToUpper(ev.Name) + " " + ev.Outcome.String()
			if ev.Redirect.Kind != "" {
				s += " redirect:" + ev.Redirect.Kind
			}
			l.seen = append(l.seen, s)
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			l.mu.Lock()
			defer l.mu.Unlock()
			s := ev.Operation() + " " + ev.Outcome.String()
			for o, n := range ev.Outcomes {
				if n > 0 && shard.Outcome(o) != shard.OutcomeOK {
					s += " " + shard.Outcome(o).String() + ":" + strconv.Itoa(n)
				}
			}
			if len(ev.Redirects) > 0 {
				s += " redirects:" + strconv.Itoa(len(ev.Redirects))
			}
			l.seen = append(l.seen, s)
		},
		Finish: func(_ context.Context, op *shard.Op) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.final = append(l.final, op.Outcome)
		},
	}
}

func (l *txEventLog) list() ([]string, []shard.Outcome) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...), append([]shard.Outcome(nil), l.final...)
}

// TestReview14ClusterTxNotRetriedEventsSayFailure: in cluster mode, once
// fn wrote through tx.Do, a MOVED or CLUSTERDOWN that ends the attempt is
// not followed: Client.Tx returns it wrapped with ErrTxNotRetried. The
// hooks must say so: that attempt's events carry no redirect and no
// retry (nothing is redirected or tried again), but the server's refusal
// that stands, as the operation's final outcome does.
func TestReview14ClusterTxNotRetriedEventsSayFailure(t *testing.T) {
	rc, m := partialCoverageCluster(t)
	ctx := context.Background()
	cases := []struct {
		name string
		code string
		from *redistest.Server
		cut  func(t *testing.T, slot int, from *redistest.Server)
		// readAfter: fn reads the key through tx.Do after the cut (the
		// refusal comes to that Do, which fn returns) instead of queuing.
		readAfter bool
		want      []string
	}{
		{name: "MOVED queued", code: "MOVED", from: m[0],
			cut: func(t *testing.T, slot int, from *redistest.Server) {
				moveSlot(t, slot, from, m[1], m)
			},
			want: []string{"WATCH ok", "INCR ok", "MULTI server_error server_error:2"}},
		{name: "CLUSTERDOWN queued", code: "CLUSTERDOWN", from: m[2],
			cut: func(t *testing.T, slot int, from *redistest.Server) {
				delSlot(t, from, slot)
			},
			want: []string{"WATCH ok", "INCR ok", "MULTI server_error server_error:2"}},
		{name: "MOVED Do", code: "MOVED", from: m[1],
			cut: func(t *testing.T, slot int, from *redistest.Server) {
				moveSlot(t, slot, from, m[2], m)
			},
			readAfter: true,
			want:      []string{"WATCH ok", "INCR ok", "GET server_error"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, slot := keyOnMaster(t, rc, tc.from, "r14txev"+strings.ReplaceAll(tc.name, " ", ""))
			cfg := txClusterConfig(rc, 5*time.Second)
			log := &txEventLog{}
			cfg.Hooks = log.hooks()
			c := newClient(t, cfg)
			learnSlotOwner(ctx, t, c, key)
			log.mu.Lock()
			log.seen, log.final = nil, nil
			log.mu.Unlock()
			runs := 0
			_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
				runs++
				if _, err := tx.Do("INCR", key+":n"); err != nil {
					return err
				}
				if runs == 1 {
					tc.cut(t, slot, tc.from)
				}
				if tc.readAfter {
					if _, err := tx.Do("GET", key); err != nil {
						return err
					}
				}
				return tx.Queue("SET", key, "v")
			})
			require.Error(t, err)
			assert.Equal(t, 1, runs)
			assert.True(t, errors.Is(err, shard.ErrTxNotRetried), "%v", err)
			seen, final := log.list()
			assert.Equal(t, tc.want, seen, "the attempt's events")
			assert.Equal(t, []shard.Outcome{shard.OutcomeServerError}, final, "the operation's outcome")
		})
	}
}
