package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDoStoresEachKeyOnItsShard(t *testing.T) {
	ctx := context.Background()
	c, servers := startRing(t, 3)
	const n = 3000
	for i := 0; i < n; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("k:%d", i), i)
		require.NoError(t, err)
	}
	// Each server holds exactly the keys the router sends it.
	want := map[string]int{}
	for i := 0; i < n; i++ {
		node, err := c.Router().Route(fmt.Sprintf("k:%d", i))
		require.NoError(t, err)
		want[node.Addr]++
	}
	for _, s := range servers {
		size, err := s.Do("DBSIZE")
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprint(want[s.Addr]), size, "server %s", s.Addr)
		assert.Greater(t, want[s.Addr], n/6, "shard %s gets a fair share", s.Addr)
	}
	for i := 0; i < n; i += 97 {
		v, err := redis.Int(c.Do(ctx, "GET", fmt.Sprintf("k:%d", i)))
		require.NoError(t, err)
		assert.Equal(t, i, v)
	}
}

func TestKeysWithOneTagShareAShard(t *testing.T) {
	ctx := context.Background()
	c, _ := startRing(t, 3)
	_, err := c.Do(ctx, "SADD", "{user1000}.following", "a", "b", "c")
	require.NoError(t, err)
	_, err = c.Do(ctx, "SADD", "{user1000}.followers", "b", "c", "d")
	require.NoError(t, err)
	// A multi-key command that is not split works when the tag keeps the keys together.
	got, err := redis.Strings(c.Do(ctx, "SINTER", "{user1000}.following", "{user1000}.followers"))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"b", "c"}, got)
}

func TestMultiKeyCommandsAreSplitAndMerged(t *testing.T) {
	ctx := context.Background()
	c, _ := startRing(t, 3)
	const n = 1000
	args := make([]any, 0, 2*n)
	keys := make([]any, 0, n)
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("mk:%d", i)
		args = append(args, k, fmt.Sprintf("v%d", i))
		keys = append(keys, k)
	}
	reply, err := c.Do(ctx, "MSET", args...)
	require.NoError(t, err)
	assert.Equal(t, "OK", reply)

	// MGET across shards equals per-key GETs, in key order, with a missing key in the middle.
	mkeys := append(append([]any{}, keys[:500]...), "mk:missing")
	mkeys = append(mkeys, keys[500:]...)
	vals, err := redis.Values(c.Do(ctx, "MGET", mkeys...))
	require.NoError(t, err)
	require.Len(t, vals, n+1)
	for i, k := range mkeys {
		one, err := c.Do(ctx, "GET", k)
		require.NoError(t, err)
		assert.Equal(t, one, vals[i], "key %v", k)
	}
	assert.Nil(t, vals[500])

	cnt, err := redis.Int(c.Do(ctx, "EXISTS", append(keys[:10:10], "mk:missing", keys[0])...))
	require.NoError(t, err)
	assert.Equal(t, 11, cnt, "EXISTS counts every key, a repeated one twice")
	cnt, err = redis.Int(c.Do(ctx, "TOUCH", keys[:20]...))
	require.NoError(t, err)
	assert.Equal(t, 20, cnt)
	cnt, err = redis.Int(c.Do(ctx, "UNLINK", keys[:100]...))
	require.NoError(t, err)
	assert.Equal(t, 100, cnt)
	cnt, err = redis.Int(c.Do(ctx, "DEL", keys...))
	require.NoError(t, err)
	assert.Equal(t, n-100, cnt)
}

func TestCrossShardCommandFailsBeforeSending(t *testing.T) {
	ctx := context.Background()
	c, _ := startRing(t, 3)
	// Find two keys on different shards.
	a, b := "x:0", ""
	na, _ := c.Router().Route(a)
	for i := 1; b == ""; i++ {
		k := fmt.Sprintf("x:%d", i)
		if n, _ := c.Router().Route(k); n != na {
			b = k
		}
	}
	_, err := c.Do(ctx, "SET", a, "1")
	require.NoError(t, err)
	for _, cmd := range [][]any{{"RENAME", a, b}, {"MSETNX", a, "1", b, "2"}, {"SUNIONSTORE", b, a}, {"EVAL", "return 1", 2, a, b}} {
		_, err = c.Do(ctx, cmd[0].(string), cmd[1:]...)
		var cse *shard.CrossShardError
		require.ErrorAs(t, err, &cse, "%v", cmd)
		assert.ErrorIs(t, err, shard.ErrCrossShard)
		assert.Contains(t, err.Error(), a)
		assert.Contains(t, err.Error(), b)
		assert.Contains(t, err.Error(), na.Name)
	}
	// Nothing was sent: a is still there, b was never created.
	v, err := redis.String(c.Do(ctx, "GET", a))
	require.NoError(t, err)
	assert.Equal(t, "1", v)
	n, err := redis.Int(c.Do(ctx, "EXISTS", b))
	require.NoError(t, err)
	assert.Zero(t, n)
}

func TestKeylessAndUnknownCommandsNeedATarget(t *testing.T) {
	ctx := context.Background()
	c, _ := startRing(t, 2)
	_, err := c.Do(ctx, "PING")
	assert.ErrorIs(t, err, shard.ErrNoKey)
	_, err = c.Do(ctx, "EVAL", "return 1", 0)
	assert.ErrorIs(t, err, shard.ErrNoKey)
	_, err = c.Do(ctx, "NO.SUCH.COMMAND", "k")
	assert.ErrorIs(t, err, shard.ErrUnknownCommand)

	reply, err := c.DoKey(ctx, "some-key", "PING")
	require.NoError(t, err)
	assert.Equal(t, "PONG", reply)

	sha, err := redis.String(c.DoKey(ctx, "k", "SCRIPT", "LOAD", "return KEYS[1]"))
	require.NoError(t, err)
	got, err := redis.String(c.Do(ctx, "EVALSHA", sha, 1, "k"))
	require.NoError(t, err)
	assert.Equal(t, "k", got)

	var (
		mu     sync.Mutex
		pinged []string
	)
	err = c.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		_, err := redis.DoContext(conn, ctx, "PING")
		mu.Lock()
		pinged = append(pinged, n.Name)
		mu.Unlock()
		return err
	})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"shard-0", "shard-1"}, pinged)
}

func TestServerErrorIsItsOwnResult(t *testing.T) {
	ctx := context.Background()
	c, _ := startRing(t, 3)
	_, err := c.Do(ctx, "SET", "str", "abc")
	require.NoError(t, err)
	_, err = c.Do(ctx, "INCR", "str")
	var re redis.Error
	require.ErrorAs(t, err, &re)
	assert.True(t, strings.HasPrefix(string(re), "ERR"), "%q", re)

	p := c.Pipeline()
	p.Send("SET", "p1", "1")
	p.Send("INCR", "str")
	p.Send("INCR", "p1")
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 3)
	assert.NoError(t, res[0].Err)
	assert.ErrorAs(t, res[1].Err, &re)
	assert.Equal(t, int64(2), res[2].Reply)
}

func TestBadInputGivesClearErrors(t *testing.T) {
	ctx := context.Background()
	c, _ := startRing(t, 2)
	_, err := c.Do(ctx, "GET")
	assert.ErrorIs(t, err, shard.ErrBadCommand)
	_, err = c.Do(ctx, "MSET", "a", "1", "b")
	assert.Error(t, err)
	_, err = c.Do(ctx, "EVAL", "return 1", -1)
	assert.ErrorIs(t, err, shard.ErrBadCommand)
	_, err = c.Do(ctx, "EVAL", "return 1", "x", "k")
	assert.ErrorIs(t, err, shard.ErrBadCommand)
	// Empty keys are valid Redis keys.
	_, err = c.Do(ctx, "SET", "", "empty")
	require.NoError(t, err)
	v, err := redis.String(c.Do(ctx, "GET", ""))
	require.NoError(t, err)
	assert.Equal(t, "empty", v)

	require.NoError(t, c.Close())
	_, err = c.Do(ctx, "GET", "k")
	assert.True(t, errors.Is(err, shard.ErrClosed))
	assert.NoError(t, c.Close(), "Close is idempotent")
}
