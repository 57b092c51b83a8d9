package reshard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowCommands returns the commands (first argument, upper case) and their
// durations that the SLOWLOG of the server at addr recorded.
func slowCommands(t *testing.T, addr string) map[string]time.Duration {
	t.Helper()
	conn, err := redis.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	entries, err := redis.Values(conn.Do("SLOWLOG", "GET", 1000))
	require.NoError(t, err)
	out := map[string]time.Duration{}
	for _, e := range entries {
		f, err := redis.Values(e, nil)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(f), 4)
		us, err := redis.Int64(f[2], nil)
		require.NoError(t, err)
		args, err := redis.Strings(f[3], nil)
		require.NoError(t, err)
		require.NotEmpty(t, args)
		name := strings.ToUpper(args[0])
		out[name] = max(out[name], time.Duration(us)*time.Microsecond)
	}
	return out
}

// TestReview10DryRunOfAHugeHashDoesNotBlockTheOldNode: the bytes of a dry
// run (and of --rate ...MB/s) were measured with MEMORY USAGE key SAMPLES
// 0, which visits every element of an aggregate on the old node's single
// thread: about a second for a hash of a million fields, during which the
// node served nothing else — in a dry run, which is meant to change and
// cost nothing. The measure samples (MEMORY USAGE's default), whose cost
// does not grow with the value, and stays close to the exact size for a
// value of like elements.
func TestReview10DryRunOfAHugeHashDoesNotBlockTheOldNode(t *testing.T) {
	ctx := context.Background()
	servers, from, to := moveAll(t)
	old, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer old.Close()
	const fields = 1_000_000
	_, err = old.Do("EVAL", fmt.Sprintf(
		"for i=1,%d do redis.call('HSET', KEYS[1], 'field:'..i, 'value:'..i) end return 1", fields), 1, "bigh")
	require.NoError(t, err)
	exact, err := redis.Int64(old.Do("MEMORY", "USAGE", "bigh", "SAMPLES", 0))
	require.NoError(t, err)
	require.Positive(t, exact)
	// Anything that holds the old node 200 ms or more is logged.
	_, err = old.Do("CONFIG", "SET", "slowlog-log-slower-than", 200_000)
	require.NoError(t, err)
	_, err = old.Do("SLOWLOG", "RESET")
	require.NoError(t, err)

	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, DryRun: true})
	require.NoError(t, err)
	assert.EqualValues(t, 1, rep.Moved)
	slow := slowCommands(t, servers[0].Addr)
	assert.NotContains(t, slow, "MEMORY", "the dry run's measure held the old node %v", slow["MEMORY"])
	// An estimate, honest within a quarter of the exact size.
	assert.InDelta(t, float64(exact), float64(rep.Bytes), float64(exact)/4, "bytes %d, exactly %d", rep.Bytes, exact)
	n, err := redis.Int64(old.Do("HLEN", "bigh"))
	require.NoError(t, err)
	assert.EqualValues(t, fields, n, "the dry run left the hash alone")
}
