package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spelled is a command word given as a fmt.Stringer over a struct:
// redigo sends the text fmt prints, its String method's, so the server
// sees the word itself.
type spelled struct{ word string }

func (s spelled) String() string { return s.word }

// TestReview21SecretsHiddenBehindStringerWords: a CONFIG SET, HELLO
// AUTH, MIGRATE AUTH/AUTH2 or ACL SETUSER whose subcommand or option
// word is a Stringer still has its secrets hidden from every statement a
// hook sees, as the server reads the same words.
func TestReview21SecretsHiddenBehindStringerWords(t *testing.T) {
	const secret = "r21-Sekr3t-pw"
	servers := redistest.StartNTB(t, 2, redistest.Options{Users: []redistest.User{{Name: "app", Password: secret}}})
	log := &statementLog{}
	cfg := ringConfig(servers)
	cfg.Pool.Username, cfg.Pool.Password = "app", secret
	cfg.Hooks = log.hooks(true)
	c := newClient(t, cfg)
	ctx := context.Background()
	const key = "r21sec:k"
	_, err := c.Do(ctx, "SET", key, "v")
	require.NoError(t, err)
	at, err := c.Router().Route(key)
	require.NoError(t, err)
	other := servers[0].Addr
	if at.Addr == other {
		other = servers[1].Addr
	}
	host, port, _ := strings.Cut(other, ":")
	sends := [][]any{
		{"CONFIG", spelled{"SET"}, "masterauth", secret},
		{"MIGRATE", host, port, key, "0", "5000", "COPY", spelled{"AUTH"}, secret},
		{"MIGRATE", host, port, key, "0", "5000", "COPY", spelled{"AUTH2"}, "app", secret},
		{"ACL", spelled{"SETUSER"}, "r21bob", "on", ">" + secret},
	}
	for _, s := range sends {
		_, _ = c.DoKey(ctx, key, s[0].(string), s[1:]...)
	}
	p := c.Pipeline()
	for _, s := range sends {
		p.SendKey(key, s[0].(string), s[1:]...)
	}
	_, _ = p.Exec(ctx)

	stmts := log.all()
	require.GreaterOrEqual(t, len(stmts), 2*len(sends), "each Do's operation and attempt: %q", stmts)
	all := strings.Join(stmts, "\n")
	for _, frag := range []string{secret, "Sekr3t", "r21-Sek"} {
		assert.NotContains(t, all, frag)
	}
}
