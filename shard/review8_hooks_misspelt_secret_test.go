package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
)

// TestReview8SecretsHiddenUnderAMisspeltName: a command name with white
// space around it ("AUTH ", " auth"), or a whole command in the name
// ("AUTH app pw"), is refused by the server as unknown, but its statement
// in hooks (db.query.text in traces) and the server's echo of it in the
// error showed the password, since the secret rules matched the name
// exactly. SENTINEL SET's and SENTINEL CONFIG SET's values (auth-pass)
// were shown too.
func TestReview8SecretsHiddenUnderAMisspeltName(t *testing.T) {
	const secret = "r8-Sekr3t-pw"
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	log := &statementLog{}
	cfg := ringConfig(servers)
	cfg.Hooks = log.hooks(false)
	c := newClient(t, cfg)
	ctx := context.Background()
	const key = "r8sec:k"
	sends := []struct {
		name string
		args []any
		want string // what the statement shows
	}{
		{"AUTH ", []any{"app", secret}, "AUTH ? ?"},
		{" auth", []any{[]byte(secret)}, "auth ?"},
		{"auth\t", []any{secret}, "auth ?"},
		{"AUTH app " + secret, nil, "AUTH ?"},
		{"hello ", []any{"3", "AUTH", "app", secret}, "hello ? ? ? ?"},
		{"config ", []any{"set", "masterauth", secret}, "config ? ? ?"},
		{"SENTINEL", []any{"SET", "m1", "auth-pass", secret}, "SENTINEL SET m1 auth-pass ?"},
		{"sentinel", []any{"config", "set", "sentinel-pass", secret}, "sentinel config set sentinel-pass ?"},
	}
	var errs []string
	for _, s := range sends {
		_, err := c.DoKey(ctx, key, s.name, s.args...)
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	stmts := log.all()
	require.NotEmpty(t, stmts)
	all := strings.Join(stmts, "\n") + "\n" + strings.Join(errs, "\n")
	for _, frag := range []string{secret, "Sekr3t", "r8-Sek"} {
		assert.NotContains(t, all, frag)
	}
	for _, s := range sends {
		assert.Contains(t, stmts, s.want)
	}
}
