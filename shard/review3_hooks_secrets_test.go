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

// TestReview3HooksHideSecretsSpelledAnyWay: statements hide passwords
// whatever the spelling: lower-case commands and subcommands, passwords
// given as []byte, several CONFIG SET pairs, MIGRATE's AUTH and AUTH2, ACL
// SETUSER rules, in a Do and in a pipeline; and a statement cut short
// never shows part of one.
func TestReview3HooksHideSecretsSpelledAnyWay(t *testing.T) {
	const secret = "r3-Sekr3t-pw"
	servers := redistest.StartNTB(t, 2, redistest.Options{Users: []redistest.User{{Name: "app", Password: secret}}})
	var (
		mu    sync.Mutex
		stmts []string // whole statements
		cuts  []string // operations' statements cut short
	)
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = "app", secret
	cfg.Hooks = &shard.Hooks{
		Finish: func(_ context.Context, op *shard.Op) {
			mu.Lock()
			defer mu.Unlock()
			stmts = append(stmts, op.Statement(0))
			for n := 1; n <= 80; n++ {
				cuts = append(cuts, op.Statement(n))
			}
		},
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			mu.Lock()
			defer mu.Unlock()
			stmts = append(stmts, ev.Statement(0))
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			mu.Lock()
			defer mu.Unlock()
			stmts = append(stmts, ev.Statement(0))
		},
	}
	c := newClient(t, cfg)
	ctx := context.Background()
	const key = "r3sec:k"
	_, err := c.Do(ctx, "set", key, "v")
	require.NoError(t, err)
	at, err := c.Router().Route(key)
	require.NoError(t, err)
	other := servers[0].Addr
	if at.Addr == other {
		other = servers[1].Addr
	}
	host, port, _ := strings.Cut(other, ":")
	sends := [][]any{
		{"auth", []byte(secret)},
		{"hello", "3", "auth", "app", []byte(secret)},
		{"config", "set", "masterauth", secret, "masteruser", []byte(secret)},
		{"migrate", host, port, key, "0", "5000", "copy", "auth", secret},
		{"migrate", host, port, key, "0", "5000", "copy", "auth2", "app", []byte(secret)},
		{"acl", "setuser", "r3bob", "on", ">" + secret},
	}
	for _, s := range sends {
		_, _ = c.DoKey(ctx, key, s[0].(string), s[1:]...)
	}
	p := c.Pipeline()
	for _, s := range sends {
		p.SendKey(key, s[0].(string), s[1:]...)
	}
	_, _ = p.Exec(ctx)

	mu.Lock()
	defer mu.Unlock()
	// HELLO, which changes the connection, is refused before sending: it
	// has an operation and no attempt.
	require.Len(t, stmts, 2*(1+len(sends))+2-1, "each Do's operation and attempt, the pipeline and its part: %q", stmts)
	all := strings.Join(stmts, "\n")
	for _, frag := range []string{secret, "Sekr3t", "r3-Sek"} {
		assert.NotContains(t, all, frag)
	}
	for _, st := range cuts {
		assert.NotContains(t, st, "Sekr")
		assert.NotContains(t, st, "r3-S")
	}
	for _, want := range []string{"auth ?", "hello 3 auth ? ?", "config set masterauth ? masteruser ?", "copy auth ?", "auth2 ? ?", "acl setuser r3bob ? ?"} {
		assert.Contains(t, all, want)
	}
}
