package reshard

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// TestReview20DumpMoveKeepsAReEncodedCopyItMayNotCompare: the mover's user
// on the old node may lack RESTORE or the scratch key a comparison by
// value needs (an ACL written for the mover before it needed them). The
// old copy then stays, as one that cannot be compared does, and the move
// goes on: the key was restored at the new node, and refusing the whole
// batch over the old copy's delete would stop a run that a re-run or
// Verify finishes.
func TestReview20DumpMoveKeepsAReEncodedCopyItMayNotCompare(t *testing.T) {
	cases := []struct {
		name  string
		rules []any
	}{
		{"scratch key not allowed", []any{"resetkeys", "~k"}},
		{"RESTORE not allowed", []any{"-restore"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := newDumpRig(t, 0)
			c, err := redis.Dial("tcp", r.src.Addr)
			require.NoError(t, err)
			defer c.Close()
			_, err = c.Do("ACL", append([]any{"SETUSER", "mover", "on", ">pw", "~*", "+@all"}, tc.rules...)...)
			require.NoError(t, err)
			_, err = r.conn.Do("AUTH", "mover", "pw")
			require.NoError(t, err)
			_, err = c.Do("HSET", "k", "a", "1", "b", "2")
			require.NoError(t, err)
			var hookErr error
			testHookDelete = func(shard.Node, []string) { hookErr = reloadWith("hash-max-listpack-entries")(c) }
			defer func() { testHookDelete = nil }()
			moved, err := r.m.dumpMove(ctx, r.conn, r.src, r.dst, []string{"k"})
			require.NoError(t, err, "a copy that cannot be compared stays; the move is not refused")
			require.NoError(t, hookErr)
			require.Equal(t, 1, moved)
			n, err := redis.Int(c.Do("DBSIZE"))
			require.NoError(t, err)
			require.Equal(t, 1, n, "the old copy, not compared, stays (and no scratch key)")
		})
	}
}
