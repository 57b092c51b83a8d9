package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// review7OldRouter is an old topology that places every key on one node
// and cannot place the keys that begin with "lost".
type review7OldRouter struct{ node shard.Node }

var errReview7NoPlace = errors.New("review7: the old topology has no owner for this key")

func (r review7OldRouter) Route(key string) (shard.Node, error) {
	if strings.HasPrefix(key, "lost") {
		return shard.Node{}, errReview7NoPlace
	}
	return r.node, nil
}

func (r review7OldRouter) Nodes() []shard.Node { return []shard.Node{r.node} }

// Every *MigrateError names the key's old owner (From) and its new owner
// (To), whatever failed: the old topology that cannot place a key (the
// command's first key, or a key a SORT pattern names) used to give an
// empty To (the new owner was looked up only after the first key had
// been placed) and an empty From. Its cause is kept (errors.Is).
func TestReview7MigrateErrorNamesBothNodes(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	to := ringConfig(servers)
	oldNode := shard.Node{Name: "old-0", Addr: servers[0].Addr}
	to.Migration = &shard.Migration{From: &shard.Config{Router: review7OldRouter{node: oldNode}}, Armed: true}
	c := newClient(t, to)

	cases := []struct {
		name   string
		cmd    string
		args   []any
		newKey string // the key that picks the command's node (the new owner)
	}{
		{name: "first key", cmd: "INCR", args: []any{"lost:1"}, newKey: "lost:1"},
		{name: "sort pattern", cmd: "SORT", args: []any{"kept:list", "BY", "lost:*"}, newKey: "kept:list"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Do(ctx, tc.cmd, tc.args...)
			require.Error(t, err)
			var me *shard.MigrateError
			require.True(t, errors.As(err, &me), "%T %v, want a *MigrateError", err, err)
			require.ErrorIs(t, err, shard.ErrMigration)
			require.ErrorIs(t, err, errReview7NoPlace)
			require.Equal(t, ringOwner(t, to, tc.newKey), me.To.Addr, "To: %v", err)
			require.NotEmpty(t, me.From.String(), "From is empty: %v", err)
			require.NotContains(t, err.Error(), " to :", "the message names no new owner")
			require.NotContains(t, err.Error(), "from  to", "the message names no old owner")
		})
	}
}
