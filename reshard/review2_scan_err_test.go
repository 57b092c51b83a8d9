package reshard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanErrorKeepsItsCause checks that a SCAN the server refuses reaches
// the caller of Verify and Move as the server's own error, matchable with
// errors.As, inside the NodeError that names the node: a permission
// problem must be told apart from a node that is down.
func TestScanErrorKeepsItsCause(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{Users: []redistest.User{
		{Name: "admin", Password: "admin-pw"},
		{Name: "noscan", Password: "noscan-pw", Rules: "~* &* +@all -scan"},
	}})
	login := func(cfg shard.Config) shard.Config {
		cfg.Pool.Username = "noscan"
		cfg.Pool.Password = "noscan-pw"
		return cfg
	}
	from := login(mustParse(t, ringURL(servers[:1], []string{"a"}, nil)))
	to := login(mustParse(t, ringURL(servers[1:], []string{"b"}, nil)))
	_, err := servers[0].Do("SET", "k", "v")
	require.NoError(t, err)

	tests := []struct {
		name string
		run  func() error
	}{
		{"verify", func() error {
			_, err := reshard.Verify(ctx, from, reshard.VerifyOptions{})
			return err
		}},
		{"move", func() error {
			_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.run()
			require.Error(t, err)
			var nerr *shard.NodeError
			assert.True(t, errors.As(err, &nerr), "a NodeError names the node: %v", err)
			var rerr redis.Error
			require.True(t, errors.As(err, &rerr), "the server's reply is matchable: %v", err)
			assert.True(t, strings.HasPrefix(string(rerr), "NOPERM"), "the server's reply: %q", rerr)
			assert.NotContains(t, err.Error(), "noscan-pw")
		})
	}
}
