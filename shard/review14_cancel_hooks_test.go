package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
)

// TestReview14CancelledCommandsOutcomes: a command, a pipeline and a
// transaction whose context ends while they wait for a blocking reply
// are reported with the outcome of what ended them (canceled, timeout),
// each attempt on its node and the operation once.
func TestReview14CancelledCommandsOutcomes(t *testing.T) {
	for _, auto := range []bool{true, false} {
		t.Run(fmt.Sprintf("autopipeline=%t", auto), func(t *testing.T) {
			rec := &recorder{}
			servers := redistest.StartNTB(t, 2, redistest.Options{})
			cfg := ringConfig(servers)
			cfg.Hooks = rec.hooks()
			cfg.DisableAutoPipeline = !auto
			c := newClient(t, cfg)
			for _, end := range []string{"cancel", "deadline"} {
				want := shard.OutcomeCanceled
				if end == "deadline" {
					want = shard.OutcomeTimeout
				}
				run := func(name string, f func(ctx context.Context) error) {
					rec.reset()
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					if end == "deadline" {
						ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
					} else {
						time.AfterFunc(300*time.Millisecond, cancel)
					}
					defer cancel()
					err := f(ctx)
					got := rec.snapshot()
					assert.Error(t, err, "%s %s", end, name)
					if assert.Len(t, got.ops, 1, "%s %s", end, name) {
						assert.Equal(t, want, got.ops[0].Outcome, "%s %s: op %v", end, name, got.ops[0].Err)
					}
					for _, ev := range got.commands {
						if ev.Name == "WATCH" {
							continue
						}
						assert.Equal(t, want, ev.Outcome, "%s %s: command %s on %s: %v", end, name, ev.Name, ev.Node, ev.Err)
					}
					for _, ev := range got.pipelines {
						assert.Equal(t, want, ev.Outcome, "%s %s: pipeline on %s: %v", end, name, ev.Node, ev.Err)
					}
					assert.NotZero(t, len(got.commands)+len(got.pipelines), "%s %s: no attempt reported", end, name)
				}
				run("Do", func(ctx context.Context) error {
					_, err := c.Do(ctx, "BLPOP", "r14cancel", 0)
					return err
				})
				run("Pipeline", func(ctx context.Context) error {
					p := c.Pipeline()
					for i := range 8 {
						p.Send("BLPOP", fmt.Sprintf("r14cancel:%d", i), 0)
					}
					res, err := p.Exec(ctx)
					if err == nil && len(res) > 0 {
						err = res[0].Err // Exec's own error is for the whole batch
					}
					return err
				})
				run("Tx", func(ctx context.Context) error {
					_, err := c.Tx(ctx, []string{"r14cancel"}, func(tx *shard.Tx) error {
						_, err := tx.Do("BLPOP", "r14cancel", 0)
						return err
					})
					return err
				})
			}
		})
	}
}
