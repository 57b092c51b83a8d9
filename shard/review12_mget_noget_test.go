package shard_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"
)

// TestReview12SplitMGETOfAUserWithoutGet: an MGET whose keys span slots
// is split, and a part of one key is sent as a GET, which is cheaper. An
// ACL user may run MGET and not GET (ACLs name commands one by one): its
// MGET failed with "NOPERM ... no permissions to run the 'get' command",
// a command the caller never sent, whose refusal no retry could fix. The
// client sends such parts as one-key MGETs from then on, and the refused
// ones again, so the caller gets its values; a Pipeline's MGET too.
func TestReview12SplitMGETOfAUserWithoutGet(t *testing.T) {
	rc := clusterForTest(t)
	for _, s := range rc.Nodes {
		_, err := s.Do("ACL", "SETUSER", "review12noget", "on", ">pw", "~*", "&*", "+@all", "-get")
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, s := range rc.Nodes {
			_, _ = s.Do("ACL", "DELUSER", "review12noget")
		}
	})
	keys := []string{"r12ng:a", "r12ng:b", "r12ng:c", "r12ng:d", "r12ng:e"}
	args := make([]any, len(keys))
	want := make([]string, len(keys))
	for i, k := range keys {
		args[i] = k
		want[i] = "v-" + k
	}
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Pool.Username, cfg.Pool.Password = "review12noget", "pw"
	ctx := context.Background()
	for _, pipelined := range []bool{false, true} {
		c := newClient(t, cfg)
		for i, k := range keys {
			_, err := c.Do(ctx, "SET", k, want[i])
			require.NoError(t, err)
		}
		_, err := c.Do(ctx, "GET", keys[0])
		require.ErrorContains(t, err, "NOPERM", "the user may not run GET")
		for round := range 2 {
			var got []string
			if pipelined {
				p := c.Pipeline()
				p.Send("MGET", args...)
				p.Send("MGET", args[:2]...)
				res, err := p.Exec(ctx)
				require.NoError(t, err)
				require.Len(t, res, 2)
				require.NoError(t, res[1].Err, "round %d: MGET of two keys", round)
				two, err := redis.Strings(res[1].Reply, nil)
				require.NoError(t, err)
				require.Equal(t, want[:2], two, "round %d", round)
				got, err = redis.Strings(res[0].Reply, res[0].Err)
				require.NoError(t, err, "round %d: pipelined MGET of a user without GET", round)
			} else {
				got, err = redis.Strings(c.Do(ctx, "MGET", args...))
				require.NoError(t, err, "round %d: MGET of a user without GET", round)
			}
			require.Equal(t, want, got, "round %d", round)
		}
	}
}
