package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview17ClientListRefused: the mover's user may not run CLIENT
// LIST on an old node (an ACL without it). The check of the clients
// fails with an error that names the node, says that CLIENT LIST was
// refused and what to do, matches *shard.NodeError for that node, and
// does not carry the password.
func TestReview17ClientListRefused(t *testing.T) {
	const secret = "s3cret-clientlist-pw"
	servers := redistest.StartNTB(t, 2, redistest.Options{Users: []redistest.User{
		{Name: "admin", Password: "admin-pw-r17", Rules: "~* &* +@all"},
		{Name: "mover", Password: secret, Rules: "~* &* +@all -client|list"},
	}})
	from := mustParse(t, ringURL(servers[:1], []string{"s0"}, nil))
	to := mustParse(t, ringURL(servers[1:], []string{"s1"}, nil))
	from.Pool.Username, from.Pool.Password = "mover", secret
	to.Pool.Username, to.Pool.Password = "mover", secret
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	check := func(what string, err error) {
		t.Helper()
		require.Error(t, err, what)
		t.Logf("%s: %v", what, err)
		var ne *shard.NodeError
		if assert.True(t, errors.As(err, &ne), "%s: %v is no *shard.NodeError", what, err) {
			assert.Equal(t, servers[0].Addr, ne.Node.Addr, what)
		}
		for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
			assert.NotContains(t, text, secret, what)
		}
		assert.Contains(t, err.Error(), servers[0].Addr, what)
		assert.Contains(t, err.Error(), "CLIENT LIST", what)
		assert.Contains(t, err.Error(), "+client|list", what)
	}
	check("CheckClients", reshard.CheckClients(ctx, from, to, false))
	_, err := reshard.Move(ctx, reshard.Options{From: from, To: to})
	check("Move", err)
}

// TestReview17ClientListNodeDown: an old node is down when the mover
// checks the clients. The error names the node and says that its
// CLIENT LIST could not be read, matching *shard.NodeError for it.
func TestReview17ClientListNodeDown(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from := mustParse(t, ringURL(servers[:2], []string{"s0", "s1"}, nil))
	to := mustParse(t, ringURL(servers[2:], []string{"s2"}, nil))
	require.NoError(t, servers[1].Kill())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := reshard.CheckClients(ctx, from, to, false)
	require.Error(t, err)
	t.Logf("CheckClients: %v", err)
	var ne *shard.NodeError
	if assert.True(t, errors.As(err, &ne), "%v is no *shard.NodeError", err) {
		assert.Equal(t, servers[1].Addr, ne.Node.Addr)
	}
	assert.Contains(t, err.Error(), servers[1].Addr)
	assert.Contains(t, err.Error(), "CLIENT LIST")
}
