package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sortFixture writes through c, under hash tag tg, a list tg+"list" of
// 1, 2, 3 with the weights tg+"w_1".. 30, 20, 10 (so SORT ... BY
// tg+"w_*" gives 3, 2, 1) and the values tg+"v_1".. "v1", "v2", "v3".
func sortFixture(t *testing.T, c *shard.Client, tg string) {
	t.Helper()
	ctx := context.Background()
	_, err := c.Do(ctx, "RPUSH", tg+"list", 1, 2, 3)
	require.NoError(t, err)
	for _, kv := range [][2]any{{1, 30}, {2, 20}, {3, 10}} {
		_, err = c.Do(ctx, "SET", fmt.Sprintf("%sw_%d", tg, kv[0]), kv[1])
		require.NoError(t, err)
		_, err = c.Do(ctx, "SET", fmt.Sprintf("%sv_%d", tg, kv[0]), fmt.Sprintf("v%d", kv[0]))
		require.NoError(t, err)
	}
}

// TestReview2MigrationSortPatternsSeeTheLatestValues: SORT ... BY and GET
// read keys named by a pattern (sharing the sorted key's hash tag), which
// the client cannot know in advance and so cannot move. While those keys
// may still sit at their old owner, a SORT at the new owner would read
// nothing there and answer a wrong order without an error; the client
// refuses it instead (a *MigrateError matching shard.ErrMigration, nothing
// sent). A SORT without patterns, or whose patterns do not move, runs.
func TestReview2MigrationSortPatternsSeeTheLatestValues(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	old := newClient(t, from)
	c := newClient(t, armedConfig(from, to))
	movingTags, stayingTags := keysByMove(t, from, to, "{s%d}", 1, 1)
	moving, staying := movingTags[0], stayingTags[0]
	for _, tg := range []string{moving, staying} {
		sortFixture(t, old, tg)
	}
	// A pattern whose keys do not move: answered.
	got, err := redis.Strings(c.Do(ctx, "SORT", staying+"list", "BY", staying+"w_*", "GET", staying+"v_*"))
	require.NoError(t, err)
	assert.Equal(t, []string{"v3", "v2", "v1"}, got)
	// No pattern: the sorted key moves and the command runs.
	got, err = redis.Strings(c.Do(ctx, "SORT", moving+"list", "DESC"))
	require.NoError(t, err)
	assert.Equal(t, []string{"3", "2", "1"}, got)
	// Patterns whose keys may sit at the old owner: never a wrong answer.
	for _, args := range [][]any{
		{moving + "list", "BY", moving + "w_*"},
		{moving + "list", "BY", "nosort", "GET", moving + "v_*"},
		{moving + "list", "BY", moving + "w_*", "GET", "#", "STORE", moving + "out"},
	} {
		for _, name := range []string{"SORT", "SORT_RO"} {
			if name == "SORT_RO" && len(args) > 4 {
				continue // no STORE in SORT_RO
			}
			reply, err := c.Do(ctx, name, args...)
			if err == nil {
				// The only right answers: the order by weight, or the values.
				vs, serr := redis.Strings(reply, nil)
				if serr != nil {
					n, ierr := redis.Int(reply, nil)
					require.NoError(t, ierr, "%s %v", name, args)
					vs, err = redis.Strings(c.Do(ctx, "LRANGE", moving+"out", 0, -1))
					require.NoError(t, err)
					assert.Equal(t, 3, n)
				}
				if args[2] == "nosort" {
					assert.Equal(t, []string{"v1", "v2", "v3"}, vs, "%s %v", name, args)
				} else {
					assert.Equal(t, []string{"3", "2", "1"}, vs, "%s %v", name, args)
				}
				continue
			}
			assert.True(t, errors.Is(err, shard.ErrMigration), "%s %v: %v", name, args, err)
			var me *shard.MigrateError
			if assert.True(t, errors.As(err, &me), "%s %v: %v", name, args, err) {
				assert.False(t, me.Sent)
			}
		}
	}
	// Nothing was written by a refused SORT ... STORE.
	n, err := redis.Int(c.Do(ctx, "EXISTS", moving+"out"))
	require.NoError(t, err)
	assert.Equal(t, 0, n)
}
