package shardisotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// exported is everything tel's exporters hold: each span's name,
// attributes, events and status, and the metrics (exemplars included)
// as JSON.
func exported(t *testing.T, tel *telemetry) string {
	t.Helper()
	var b strings.Builder
	for _, s := range tel.spans.Ended() {
		fmt.Fprintf(&b, "%s %v %v %v\n", s.Name(), s.Attributes(), s.Events(), s.Status())
	}
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	dump, err := json.Marshal(rm)
	require.NoError(t, err)
	b.Write(dump)
	return b.String()
}

// TestReview20FailedLoginsExportNoSecret: logins that fail (a client
// whose URL has a wrong password, AUTH and HELLO AUTH with wrong
// passwords, sent alone, through Client.Conn, in a Client.Tx) and
// credential commands that succeed (ACL SETUSER, CONFIG SET requirepass
// in a transaction), with statements on, leave no password anywhere in
// the spans or the metrics, while what was sent is recorded.
func TestReview20FailedLoginsExportNoSecret(t *testing.T) {
	const good = "r20-G00d-pass"
	s := redistest.StartTB(t, redistest.Options{Users: []redistest.User{{Name: "app", Password: good}}})
	ctx := context.Background()
	secrets := map[string]string{}
	secret := func(name string) string {
		v := "r20-S3cret-" + name
		secrets[name] = v
		return v
	}
	cases := []struct {
		name string
		run  func(t *testing.T, c *shard.Client) error
		want string // in db.query.text; "" when the command has no span of its own (a Tx.Do)
	}{
		{"AUTH", func(t *testing.T, c *shard.Client) error {
			_, err := c.DoKey(ctx, "k", "AUTH", "app", secret("auth"))
			return err
		}, "AUTH ? ?"},
		{"HELLO AUTH", func(t *testing.T, c *shard.Client) error {
			_, err := c.DoKey(ctx, "k", "HELLO", "2", "AUTH", "app", secret("hello"))
			return err
		}, "HELLO 2 AUTH ? ?"},
		{"AUTH via Conn", func(t *testing.T, c *shard.Client) error {
			conn := c.Conn()
			defer conn.Close()
			_, err := conn.Do("AUTH", "app", secret("conn"))
			return err
		}, "AUTH ? ?"},
		{"AUTH in a transaction", func(t *testing.T, c *shard.Client) error {
			_, err := c.Tx(ctx, []string{"k"}, func(tx *shard.Tx) error {
				_, err := tx.Do("AUTH", "app", secret("tx"))
				return err
			})
			return err
		}, ""},
		{"ACL SETUSER and CONFIG SET in a transaction", func(t *testing.T, c *shard.Client) error {
			_, err := c.Tx(ctx, []string{"k"}, func(tx *shard.Tx) error {
				if _, err := tx.Do("ACL", "SETUSER", "r20user", "on", ">"+secret("acl"), "~*", "+@all"); err != nil {
					return err
				}
				_, err := tx.Do("CONFIG", "SET", "requirepass", secret("requirepass"))
				return err
			})
			return err
		}, ""},
	}
	cfg, err := shard.ParseURL(fmt.Sprintf("redis-ring://%s@%s?health_interval=-1s", url.UserPassword("app", good), s.Addr))
	require.NoError(t, err)
	tel := instrumented(t, cfg, shardisotel.WithStatements(0))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tel.spans.Reset()
			tc.run(t, tel.c) //nolint:errcheck // only what is exported matters
			all := exported(t, tel)
			if tc.want != "" {
				assert.Contains(t, all, tc.want)
			}
			for _, v := range secrets {
				assert.NotContains(t, all, v)
			}
		})
	}

	t.Run("wrong password in the URL", func(t *testing.T) {
		bad := secret("url")
		cfg, err := shard.ParseURL(fmt.Sprintf("redis-ring://%s@%s?health_interval=-1s&dial_timeout=1s", url.UserPassword("app", bad), s.Addr))
		require.NoError(t, err)
		cfg.Pool.DialTimeout = time.Second
		tel := instrumented(t, cfg, shardisotel.WithStatements(0))
		_, err = tel.c.Do(ctx, "GET", "k")
		require.Error(t, err)
		all := exported(t, tel)
		assert.Contains(t, all, `"auth"`, "the dial's error.type")
		assert.Contains(t, all, "GET k")
		for _, v := range secrets {
			assert.NotContains(t, all, v)
		}
		assert.NotContains(t, all, url.QueryEscape(bad))
	})
}
