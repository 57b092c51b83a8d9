package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// operations records Operation() of every event, read during the hooks.
type operations struct {
	mu       sync.Mutex
	starts   []string
	commands []string
	finishes []string
}

func (o *operations) hooks() *shard.Hooks {
	return &shard.Hooks{
		Start: func(ctx context.Context, op *shard.Op) context.Context {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.starts = append(o.starts, op.Operation())
			return ctx
		},
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.commands = append(o.commands, ev.Operation())
		},
		Finish: func(_ context.Context, op *shard.Op) {
			o.mu.Lock()
			defer o.mu.Unlock()
			o.finishes = append(o.finishes, op.Operation())
		},
	}
}

func (o *operations) take() (starts, commands, finishes []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	starts, commands, finishes = o.starts, o.commands, o.finishes
	o.starts, o.commands, o.finishes = nil, nil, nil
	return starts, commands, finishes
}

// TestReview3HooksOperationNamesModuleCommands: a module's command (here
// SET renamed JSON.SET, which the client learns from COMMAND INFO, and
// FT.SEARCH sent with DoKey to a server that does not know it) keeps its
// name as the operation name instead of OTHER, so a user of modules can
// tell them apart; a renamed command the client learned too. Names that
// are neither keep OTHER, and module-shaped names built from data stop
// getting names of their own after MaxModuleOperations.
func TestReview3HooksOperationNamesModuleCommands(t *testing.T) {
	// The bound is the process's: give the names back for the tests and
	// examples that run after this one.
	t.Cleanup(shard.ResetModuleOperations)
	servers := redistest.StartNTB(t, 1, redistest.Options{Args: []string{
		"--rename-command", "SET", "JSON.SET",
		"--rename-command", "GET", "FETCH",
	}})
	rec := &operations{}
	cfg := ringConfig(servers)
	cfg.Hooks = rec.hooks()
	c := newClient(t, cfg)
	ctx := context.Background()

	_, err := c.Do(ctx, "json.set", "r3op:k", "v")
	require.NoError(t, err)
	_, err = c.Do(ctx, "json.set", "r3op:k", "v") // learned before it is planned
	require.NoError(t, err)
	_, err = c.Do(ctx, "fetch", "r3op:k")
	require.NoError(t, err)
	_, err = c.DoKey(ctx, "r3op:k", "FT.SEARCH", "idx", "*")
	require.Error(t, err) // the server has no such module
	_, err = c.DoKey(ctx, "r3op:k", "user:42:get")
	require.Error(t, err)
	starts, commands, finishes := rec.take()
	want := []string{"JSON.SET", "JSON.SET", "FETCH", "FT.SEARCH", shard.OtherOperation}
	assert.Equal(t, want, commands)
	assert.Equal(t, want, starts)
	assert.Equal(t, want, finishes)

	// Dotted names built from data: bounded.
	distinct := map[string]bool{}
	for i := range 2 * shard.MaxModuleOperations {
		_, err := c.DoKey(ctx, "r3op:k", fmt.Sprintf("user%d.name", i))
		require.Error(t, err)
	}
	_, commands, _ = rec.take()
	require.Len(t, commands, 2*shard.MaxModuleOperations)
	for _, name := range commands {
		distinct[name] = true
	}
	assert.True(t, distinct[shard.OtherOperation], "names past the bound are OTHER")
	assert.LessOrEqual(t, len(distinct), shard.MaxModuleOperations, "%d names", len(distinct))
	// The names already seen keep theirs.
	_, err = c.DoKey(ctx, "r3op:k", "ft.search", "idx", "*")
	require.Error(t, err)
	_, err = c.Do(ctx, "JSON.SET", "r3op:k", "v")
	require.NoError(t, err)
	_, commands, _ = rec.take()
	assert.Equal(t, []string{"FT.SEARCH", "JSON.SET"}, commands)
}

// Operation is the name to label metrics and spans with: a command the
// client knows, or a module's, in upper case; OTHER for anything else.
func ExampleCommandEvent_Operation() {
	for _, name := range []string{"get", "FT.SEARCH", "user:42:get"} {
		ev := &shard.CommandEvent{Name: name}
		fmt.Println(ev.Operation())
	}
	// Output:
	// GET
	// FT.SEARCH
	// OTHER
}

// A pipeline's operation is PIPELINE.
func ExampleOp_Operation() {
	fmt.Println((&shard.Op{Name: "PIPELINE", Pipeline: true}).Operation())
	fmt.Println((&shard.Op{Name: "hgetall"}).Operation())
	// Output:
	// PIPELINE
	// HGETALL
}
