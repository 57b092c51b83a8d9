package shard_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type review9CtxKey struct{}

// review9PanickingHook panics; its name shows in the stack.
func review9PanickingHook() { panic("review9 hook failed") }

// TestReview9JoinedHooksRunDespiteAPanic: hooks joined by JoinHooks run
// each, whatever the hooks before them do: when the first one's Start,
// Command or Finish panics, the second still sees the operation from its
// Start to its Finish with the context its Start returned (a tracer's
// span), and the panic reaches Hooks.Panic with the panicking hook's own
// value and stack. Before, a panic skipped the hooks after it: a
// tracer's Start did not run but its Finish did, and ended the caller's
// span found in the context.
func TestReview9JoinedHooksRunDespiteAPanic(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	for _, which := range []string{"Start", "Command", "Finish"} {
		t.Run(which, func(t *testing.T) {
			var (
				mu     sync.Mutex
				seen   []string // what the second hooks saw
				panics []*shard.PanicError
			)
			note := func(s string) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, s)
			}
			first := &shard.Hooks{Panic: func(err *shard.PanicError) {
				mu.Lock()
				defer mu.Unlock()
				panics = append(panics, err)
			}}
			switch which {
			case "Start":
				first.Start = func(ctx context.Context, _ *shard.Op) context.Context { review9PanickingHook(); return ctx }
			case "Command":
				first.Command = func(context.Context, *shard.CommandEvent) { review9PanickingHook() }
			case "Finish":
				first.Finish = func(context.Context, *shard.Op) { review9PanickingHook() }
			}
			second := &shard.Hooks{
				Start: func(ctx context.Context, op *shard.Op) context.Context {
					note("start " + op.Name)
					return context.WithValue(ctx, review9CtxKey{}, "mine")
				},
				Command: func(ctx context.Context, ev *shard.CommandEvent) {
					note("command " + ev.Name + " " + ctx.Value(review9CtxKey{}).(string))
				},
				Finish: func(ctx context.Context, op *shard.Op) {
					v, _ := ctx.Value(review9CtxKey{}).(string)
					note("finish " + op.Name + " " + v)
				},
			}
			cfg := ringConfig([]*redistest.Server{s})
			cfg.Health.Interval = -1
			cfg.Hooks = shard.JoinHooks(first, second)
			c := newClient(t, cfg)
			_, err := c.Do(context.Background(), "SET", "r9jh", "v")
			require.NoError(t, err)

			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, []string{"start SET", "command SET mine", "finish SET mine"}, seen)
			require.Len(t, panics, 1)
			assert.Equal(t, "Hooks."+which, panics[0].Callback)
			assert.Equal(t, "review9 hook failed", panics[0].Value)
			assert.True(t, strings.Contains(string(panics[0].Stack), "review9PanickingHook"), "the hook's own stack:\n%s", panics[0].Stack)
		})
	}
}
