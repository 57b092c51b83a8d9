package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pipelineHooks returns hooks whose Pipeline hook waits at the gate.
func (g *holdGate) pipelineHooks() *shard.Hooks {
	return &shard.Hooks{Pipeline: func(context.Context, *shard.PipelineEvent) { g.wait() }}
}

// TestReview11DoHooksOutsideTheFence: a Do or Pipeline.Exec planned by a
// migration's old topology is counted in the fence until it has its
// results; its Command and Pipeline hooks ran inside that count, after
// the replies came: a slow hook (a tracing exporter that stalls) held the
// switch of the migration, for every client process of the deployment,
// for as long as it ran, up to the switch's bound. The hooks run once the
// execution left the fence.
func TestReview11DoHooksOutsideTheFence(t *testing.T) {
	for _, name := range []string{"Do", "Pipeline"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			// A long read timeout: the switch would wait for a held
			// caller for tens of seconds before it gave up.
			s := newSwitchSetup(t, 20*time.Second)
			gate := newHoldGate()
			hooks := gate.commandHooks("SET")
			if name == "Pipeline" {
				hooks = gate.pipelineHooks()
			}
			c := s.migrating(t, hooks)
			k := s.moving(t, "r11hf"+name, 1)[0]
			acked, done := s.fenceWhileHeld(t, c, gate, func() error {
				if name == "Do" {
					_, err := c.Do(ctx, "SET", k, "v")
					return err
				}
				p := c.Pipeline()
				p.Send("SET", k, "v")
				p.Send("GET", k)
				res, err := p.Exec(ctx)
				if err == nil && len(res) != 2 {
					err = errors.New("not two results")
				}
				for _, r := range res {
					err = errors.Join(err, r.Err)
				}
				return err
			})
			require.NoError(t, heldResult(t, done), "the command, sent before the switch")
			require.True(t, acked, "the switch waited for a hook that ran after its command's replies")
			s.mark(t, c, shard.PhaseArmed)
			waitFor(t, 20*time.Second, "the client to arm", func() bool {
				i, _ := c.Migration()
				return i.Phase == shard.PhaseArmed
			})
			v, err := redis.String(c.Do(ctx, "GETEX", k)) // a write that changes nothing: moves the key
			require.NoError(t, err)
			assert.Equal(t, "v", v)
			assert.Equal(t, []string{ringOwner(t, s.to, k)}, holders(t, s.servers, k))
		})
	}
}
