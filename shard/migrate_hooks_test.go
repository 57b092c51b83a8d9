package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sideEvent is what a Command or Pipeline hook saw: the node, and the
// command's name or "pipeline of N".
type sideEvent struct {
	node, what string
}

// TestMigrationCommandsReachTheHooks: what a migrating client sends on the
// way to a caller's command (the MIGRATE of a key, the read tried at the
// old owner, alone or in a transaction, the DEL after a blind overwrite) is
// reported to the Command and Pipeline hooks with the node it went to, in
// the order it was sent, a MIGRATE's statement hides the password it
// carries, and MigrationInfo counts each step.
func TestMigrationCommandsReachTheHooks(t *testing.T) {
	const password = "migrate-hook-secret"
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{DefaultPassword: password})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	from.Pool.Password, to.Pool.Password = password, password
	byAddr := serversByAddr(servers)
	keys := movingKeys(t, from, to, "hk:", 5)

	var (
		mu         sync.Mutex
		events     []sideEvent
		statements []string
	)
	cfg := armedConfig(from, to)
	cfg.Hooks = &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, sideEvent{ev.Node.Addr, ev.Name})
			statements = append(statements, ev.Statement(0))
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, sideEvent{ev.Node.Addr, fmt.Sprint("pipeline of ", ev.Commands)})
			statements = append(statements, ev.Statement(0))
		},
	}
	c := newClient(t, cfg)

	tests := []struct {
		name    string
		atOld   bool  // the key is written at its old owner first
		cmd     []any // the caller's command; its key is appended second
		onOld   []string
		onNew   []string
		oldTurn int // where the old owner's events stand: 0 first, 1 after the new owner's
	}{
		{"read answered at the old owner", true, []any{"GET"}, []string{"GET"}, nil, 0},
		{"read of a key not there, then at the new owner", false, []any{"GET"}, []string{"GET"}, []string{"GET"}, 0},
		{"a read whose reply cannot show the key runs in a transaction", false, []any{"HGET", "f"}, []string{"pipeline of 4"}, []string{"HGET"}, 0},
		{"a blind overwrite deletes the old copy after", true, []any{"SET", "v"}, []string{"DEL"}, []string{"SET"}, 1},
		{"read-modify-write moves the key first", true, []any{"INCR"}, []string{"MIGRATE"}, []string{"INCR"}, 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := keys[i]
			oldAddr, newAddr := ringOwner(t, from, k), ringOwner(t, to, k)
			if tt.atOld {
				_, err := byAddr[oldAddr].Do("SET", k, "7")
				require.NoError(t, err)
			}
			mu.Lock()
			events, statements = nil, nil
			mu.Unlock()
			args := append([]any{k}, tt.cmd[1:]...)
			_, err := c.Do(ctx, tt.cmd[0].(string), args...)
			require.NoError(t, err)

			mu.Lock()
			got, stmts := events, statements
			mu.Unlock()
			var old, nw []sideEvent
			for _, e := range tt.onOld {
				old = append(old, sideEvent{oldAddr, e})
			}
			for _, e := range tt.onNew {
				nw = append(nw, sideEvent{newAddr, e})
			}
			want := append(old, nw...)
			if tt.oldTurn == 1 {
				want = append(nw, old...)
			}
			assert.Equal(t, want, got)
			for _, s := range stmts {
				assert.NotContains(t, s, password, "a statement given to a hook")
			}
			if tt.cmd[0] == "INCR" {
				require.Len(t, stmts, 2)
				assert.True(t, strings.HasPrefix(stmts[0], "MIGRATE "), "%q", stmts[0])
				assert.Contains(t, stmts[0], " AUTH ?", "the password's place is kept, its value hidden")
			}
		})
	}
	// The same steps, counted: one MIGRATE, one overwrite, one read
	// answered at the old owner (the other read found no key there).
	info, ok := c.Migration()
	require.True(t, ok)
	assert.Equal(t, shard.MigrationInfo{From: info.From, To: info.To, FromID: info.FromID, ToID: info.ToID,
		Moves: 1, Overwrites: 1, OldReads: 1, Phase: shard.PhaseArmed}, info)
}
