package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A mover over TLS whose ACL user lacks a command the move needs
// (MIGRATE on the old node, RESTORE on the new one, which the old node's
// MIGRATE runs with tls-cluster yes and the mover itself runs without,
// falling back to DUMP/RESTORE) fails with an error that matches
// ErrPermission, keeps the server's refusal (a redis.Error naming the
// command), says to grant the permission rather than to check the way
// between the servers or their TLS, and holds no password; no key is
// lost.
func TestReview21MoverTLSACLMissingPermission(t *testing.T) {
	const secret = "r21-mover-Secret"
	for _, tc := range []struct {
		name, missing string
		args          []string
		skipProbe     bool
	}{
		{"migrate", "migrate", []string{"--tls-cluster", "yes"}, false},
		{"migrate-no-probe", "migrate", []string{"--tls-cluster", "yes"}, true},
		{"restore-by-migrate", "restore", []string{"--tls-cluster", "yes"}, false},
		{"restore-by-mover", "restore", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			servers := redistest.StartNTB(t, 2, redistest.Options{TLS: true, Args: tc.args,
				Users: []redistest.User{
					{Name: "admin", Password: "admin-pw-r21"},
					{Name: "mover", Password: secret, Rules: "~* &* +@all -" + tc.missing},
				}})
			from := mustParse(t, ringURL(servers[:1], []string{"s0"}, nil))
			to := mustParse(t, ringURL(servers[1:], []string{"s1"}, nil))
			for _, c := range []*shard.Config{&from, &to} {
				c.Pool.TLSConfig = servers[0].TLS.ClientConfig()
				c.Pool.Username, c.Pool.Password = "mover", secret
			}
			const n = 20
			fill(t, from, "acl", n)
			_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, SkipProbe: tc.skipProbe})
			require.Error(t, err)
			t.Logf("%v", err)
			assert.ErrorIs(t, err, reshard.ErrPermission)
			var re redis.Error
			require.True(t, errors.As(err, &re), "error %v holds no redis.Error", err)
			assert.Contains(t, strings.ToLower(err.Error()), tc.missing, "the error names the missing permission")
			assert.Contains(t, err.Error(), "grant it")
			assert.NotContains(t, err.Error(), "tls-cluster yes", "no TLS or network advice for an ACL refusal")
			assert.NotContains(t, fmt.Sprintf("%v %+v %#v", err, err, err), secret)
			// No key lost: each is at one node or the other.
			for i := range n {
				k := fmt.Sprintf("acl:%d", i)
				a, err := servers[0].Do("EXISTS", k)
				require.NoError(t, err)
				b, err := servers[1].Do("EXISTS", k)
				require.NoError(t, err)
				assert.True(t, a == "1" || b == "1", "%s is at neither node", k)
			}
		})
	}
}
