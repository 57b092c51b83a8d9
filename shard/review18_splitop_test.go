package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// splitOpRecorder records the operation names of the Command and
// Pipeline events.
type splitOpRecorder struct {
	mu    sync.Mutex
	parts map[string]int // "pipeline MGET", "command GET", ...
}

func (r *splitOpRecorder) hooks() *shard.Hooks {
	return &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.parts["command "+ev.Operation()]++
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.parts["pipeline "+ev.Operation()]++
		},
	}
}

func (r *splitOpRecorder) take() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.parts
	r.parts = map[string]int{}
	return out
}

// names returns the operation names the events were given, whatever
// their kind.
func names(parts map[string]int) map[string]bool {
	out := map[string]bool{}
	for k := range parts {
		for i := 0; i < len(k); i++ {
			if k[i] == ' ' {
				out[k[i+1:]] = true
				break
			}
		}
	}
	return out
}

// TestReview18SplitCommandPartsNamedAfterCommand: one MGET (MSET, DEL,
// EXISTS, UNLINK, TOUCH) over keys of several slots is split into one
// part per slot; several parts on one node came to the Pipeline hook
// named PIPELINE, and a one-key part of an MGET (sent as GET) to the
// Command hook named GET, so that tracers and metrics (the extras name
// spans and series by Operation) counted a caller's MGET as pipelines
// and GETs. Every part is now named after the caller's command; a
// pipeline's part of several commands stays PIPELINE.
func TestReview18SplitCommandPartsNamedAfterCommand(t *testing.T) {
	ctx := context.Background()
	run := func(t *testing.T, cfg shard.Config, keys []any) {
		rec := &splitOpRecorder{parts: map[string]int{}}
		cfg.Hooks = rec.hooks()
		c := newClient(t, cfg)
		var pairs []any
		for _, k := range keys {
			pairs = append(pairs, k, "v")
		}
		for _, cmd := range []struct {
			name string
			args []any
		}{
			{"MSET", pairs},
			{"MGET", keys},
			{"EXISTS", keys},
			{"TOUCH", keys},
			{"DEL", keys},
			{"MSET", pairs},
			{"UNLINK", keys},
		} {
			rec.take()
			_, err := c.Do(ctx, cmd.name, cmd.args...)
			require.NoError(t, err, cmd.name)
			got := rec.take()
			assert.NotEmpty(t, got, cmd.name)
			assert.Equal(t, map[string]bool{cmd.name: true}, names(got), "%s: events %v", cmd.name, got)
		}
		// A pipeline of several commands on one node is a PIPELINE part.
		p := c.Pipeline()
		p.SendKey(keys[0].(string), "SET", keys[0], "1")
		p.SendKey(keys[0].(string), "GET", keys[0])
		_, err := p.Exec(ctx)
		require.NoError(t, err)
		assert.Equal(t, map[string]int{"pipeline PIPELINE": 1}, rec.take())
	}

	t.Run("ring", func(t *testing.T) {
		servers := redistest.StartNTB(t, 3, redistest.Options{})
		cfg := ringConfig(servers)
		probe := newClient(t, ringConfig(servers))
		// One key on each shard: every part has one key (an MGET's is
		// sent as GET); then two on each.
		for _, per := range []int{1, 2} {
			var keys []any
			count := map[string]int{}
			for i := 0; len(keys) < per*len(servers) && i < 10000; i++ {
				k := fmt.Sprintf("r18op:%d:%d", per, i)
				n, err := probe.Router().Route(k)
				require.NoError(t, err)
				if count[n.Addr] < per {
					count[n.Addr]++
					keys = append(keys, k)
				}
			}
			require.Len(t, keys, per*len(servers))
			t.Run(fmt.Sprintf("%d per shard", per), func(t *testing.T) { run(t, cfg, keys) })
		}
	})

	t.Run("cluster", func(t *testing.T) {
		rc := clusterForTest(t)
		// Twelve keys of twelve slots: several slots on each master.
		var keys []any
		for i := 0; i < 12; i++ {
			keys = append(keys, fmt.Sprintf("r18op:c:%d", i))
		}
		run(t, clusterConfig(rc.Seeds()...), keys)
	})
}
