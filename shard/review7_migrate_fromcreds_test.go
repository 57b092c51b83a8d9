package shard_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// Both topologies of a migration are reached with the client's pool
// options, credentials included. A From (or a run-time new topology) that
// gives credentials other than the client's had them ignored without a
// word: its nodes were logged in to with the client's (here none, so the
// old node that wants a password refused every move with NOAUTH). Such a
// config is refused as a bad one, and the error never carries the
// secret. The client's own credentials, repeated in From, are accepted.
func TestReview7MigrationRefusesCredentialsItWouldIgnore(t *testing.T) {
	const secret = "review7-old-secret"
	ctx := context.Background()
	oldSrv := redistest.StartTB(t, redistest.Options{DefaultPassword: secret})
	newSrv := redistest.StartTB(t, redistest.Options{})
	noLeak := func(t *testing.T, err error) {
		t.Helper()
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			require.NotContains(t, text, secret)
		}
	}

	cases := []struct {
		name         string
		user, pass   string // From's
		clientUser   string
		clientPass   string
		wantRefusals bool
	}{
		{name: "password, client has none", pass: secret, wantRefusals: true},
		{name: "user and password, client has none", user: "old-user", pass: secret, wantRefusals: true},
		{name: "another password than the client's", pass: secret, clientPass: "client-pw", wantRefusals: true},
		{name: "another user than the client's", user: "old-user", pass: secret, clientUser: "app", clientPass: secret, wantRefusals: true},
		{name: "the client's own", user: "app", pass: secret, clientUser: "app", clientPass: secret},
		{name: "none", clientPass: secret},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			from := ringConfig([]*redistest.Server{oldSrv})
			from.Pool.Username, from.Pool.Password = tc.user, tc.pass
			cfg := ringConfig([]*redistest.Server{newSrv})
			cfg.Shards[0].Name = "new-0"
			cfg.Pool.Username, cfg.Pool.Password = tc.clientUser, tc.clientPass
			cfg.Migration = &shard.Migration{From: &from}
			err := cfg.Validate()
			if !tc.wantRefusals {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, shard.ErrBadConfig)
			noLeak(t, err)
			c, err := shard.New(ctx, cfg)
			if err == nil {
				c.Close()
			}
			require.ErrorIs(t, err, shard.ErrBadConfig, "New")
			noLeak(t, err)
		})
	}

	t.Run("URL", func(t *testing.T) {
		u := "redis-ring://" + newSrv.Addr + "?from=" + url.QueryEscape("redis-ring://:"+secret+"@"+oldSrv.Addr)
		_, err := shard.ParseURL(u)
		require.ErrorIs(t, err, shard.ErrBadConfig, "ParseURL")
		noLeak(t, err)
	})

	t.Run("StartMigration", func(t *testing.T) {
		c := newClient(t, ringConfig([]*redistest.Server{newSrv}))
		to := ringConfig([]*redistest.Server{newSrv, oldSrv})
		to.Pool.Password = secret
		err := c.StartMigration(ctx, to)
		require.ErrorIs(t, err, shard.ErrBadConfig)
		noLeak(t, err)
		_, on := c.Migration()
		require.False(t, on, "a refused migration is on")
	})
}
