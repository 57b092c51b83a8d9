package shard_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview14SubcommandSpelledSecretCommandsHideTheirArguments: a
// command named as Redis names a subcommand in INFO commandstats, ACL
// rules and COMMAND DOCS ("ACL|SETUSER", "config|set"), or with a suffix
// glued to it ("AUTH2"), is unknown to the server, which quotes its
// arguments back in its refusal; its arguments are secrets all the same.
// The statements the hooks give and the error the caller and Finish get
// showed the password.
func TestReview14SubcommandSpelledSecretCommandsHideTheirArguments(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	h := &shard.Hooks{
		Finish: func(_ context.Context, op *shard.Op) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, op.Statement(0))
			if op.Err != nil {
				seen = append(seen, op.Err.Error())
			}
		},
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, ev.Statement(0))
			if ev.Err != nil {
				seen = append(seen, ev.Err.Error())
			}
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, ev.Statement(0))
		},
	}
	c, _ := hookedRing(t, 1, h)
	ctx := context.Background()
	cmds := [][]any{
		{"ACL|SETUSER", "u1", "on", ">Secr3t-a"},
		{"config|set", "requirepass", "Secr3t-b"},
		{"AUTH|x", "Secr3t-c"},
		{"Sentinel|Set", "m", "auth-pass", "Secr3t-d"},
		{"AUTH2", "app", "Secr3t-e"},
	}
	var errs []string
	for _, cmd := range cmds {
		_, err := c.DoKey(ctx, "k", cmd[0].(string), cmd[1:]...)
		require.Error(t, err, "%v", cmd[0])
		errs = append(errs, err.Error())
	}
	p := c.Pipeline()
	for _, cmd := range cmds {
		p.SendKey("k", cmd[0].(string), cmd[1:]...)
	}
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	for _, r := range res {
		require.Error(t, r.Err)
		errs = append(errs, r.Err.Error())
	}
	mu.Lock()
	all := strings.Join(append(seen, errs...), "\n")
	mu.Unlock()
	assert.Contains(t, all, "ACL|SETUSER ? ? ?", "the name is shown, its arguments are not")
	assert.NotContains(t, all, "Secr3t")
}
