package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A migrating client moves a key with MIGRATE ... AUTH <password>. An old
// owner that does not know MIGRATE (renamed away, or a proxy) answers
// "unknown command ..., with args beginning with: ... 'AUTH' '<password>'".
// Neither the caller's error nor the Command hook's event may carry the
// password.
func TestMigrateErrorHidesThePassword(t *testing.T) {
	const secret = "s3cret-migrate-pw"
	servers := redistest.StartNTB(t, 4, redistest.Options{
		DefaultPassword: secret,
		Args:            []string{"--rename-command", "MIGRATE", "MIGRATE-hidden"},
	})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	for _, cfg := range []*shard.Config{&from, &to} {
		cfg.Pool.Password = secret
	}
	var mu sync.Mutex
	var events []string
	from.Hooks = &shard.Hooks{Command: func(_ context.Context, ev *shard.CommandEvent) {
		if ev.Err != nil {
			mu.Lock()
			events = append(events, fmt.Sprintf("%v %+v", ev.Err, ev.Err))
			mu.Unlock()
		}
	}}
	c := newClient(t, from)
	ctx := context.Background()
	moving := movingKeys(t, from, to, "sec:", 1)[0]
	_, err := c.Do(ctx, "SET", moving, "v")
	require.NoError(t, err)
	require.NoError(t, c.StartMigration(ctx, to))
	require.NoError(t, c.ArmMigration())

	_, err = c.Do(ctx, "APPEND", moving, "w") // moves the key first: MIGRATE ... AUTH
	require.Error(t, err, "the old owner has no MIGRATE")
	for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		require.NotContains(t, text, secret)
	}
	require.True(t, strings.Contains(err.Error(), "unknown command") || strings.Contains(err.Error(), "MIGRATE"),
		"the error no longer says what failed: %v", err)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, events, "the hook saw no failed command")
	for _, e := range events {
		require.NotContains(t, e, secret)
	}
}
