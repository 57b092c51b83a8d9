package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMigrationReadsWhereTheKeyIs: during a migration a read-only command
// on keys that still sit at their old owner is answered there, without a
// MIGRATE; a key already at its new owner is read there; and a read never
// returns a value older than the latest write, whichever copy exists.
func TestMigrationReadsWhereTheKeyIs(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	byAddr := map[string]*redistest.Server{}
	for _, s := range servers {
		byAddr[s.Addr] = s
	}
	// pair finds n keys with prefix p that move from one old owner to one
	// new owner (the same pair for all), as package ring places them.
	pair := func(t *testing.T, p string, n int) (keys []string, oldAddr, newAddr string) {
		t.Helper()
		for i := 0; len(keys) < n && i < 100000; i++ {
			k := fmt.Sprintf("%s%d", p, i)
			o, nw := ringOwner(t, from, k), ringOwner(t, to, k)
			if o == nw || (oldAddr != "" && (o != oldAddr || nw != newAddr)) {
				continue
			}
			oldAddr, newAddr = o, nw
			keys = append(keys, k)
		}
		require.Len(t, keys, n)
		return keys, oldAddr, newAddr
	}
	staying := func(t *testing.T, p string) string {
		t.Helper()
		for i := 0; ; i++ {
			k := fmt.Sprintf("%s%d", p, i)
			if ringOwner(t, from, k) == ringOwner(t, to, k) {
				return k
			}
		}
	}
	start := func(t *testing.T) *shard.Client {
		t.Helper()
		for _, s := range servers {
			_, err := s.Do("FLUSHALL")
			require.NoError(t, err)
		}
		cfg := to
		f := from
		cfg.Migration = &shard.Migration{From: &f, Armed: true}
		return newClient(t, cfg)
	}
	set := func(t *testing.T, addr string, args ...string) {
		t.Helper()
		_, err := byAddr[addr].Do(args...)
		require.NoError(t, err)
	}

	t.Run("GET of a key at its old owner: answered there, not moved", func(t *testing.T) {
		c := start(t)
		keys, o, _ := pair(t, "g:", 1)
		set(t, o, "SET", keys[0], "old-value")
		before := migrateCalls(t, servers)
		v, err := redis.String(c.Do(ctx, "GET", keys[0]))
		require.NoError(t, err)
		assert.Equal(t, "old-value", v)
		assert.Equal(t, []string{o}, holders(t, servers, keys[0]))
		assert.Equal(t, before, migrateCalls(t, servers), "no MIGRATE for a read")
	})

	t.Run("MGET of keys at one old owner: answered there", func(t *testing.T) {
		c := start(t)
		keys, o, _ := pair(t, "m:", 5)
		for i, k := range keys {
			set(t, o, "SET", k, fmt.Sprint("v", i))
		}
		args := make([]any, len(keys))
		for i, k := range keys {
			args[i] = k
		}
		vs, err := redis.Strings(c.Do(ctx, "MGET", args...))
		require.NoError(t, err)
		require.Len(t, vs, len(keys))
		for i := range keys {
			assert.Equal(t, fmt.Sprint("v", i), vs[i])
			assert.Equal(t, []string{o}, holders(t, servers, keys[i]))
		}
	})

	t.Run("a key another process moved and wrote: read at the new owner", func(t *testing.T) {
		c := start(t)
		keys, _, nw := pair(t, "n:", 1)
		set(t, nw, "SET", keys[0], "written-after-move")
		v, err := redis.String(c.Do(ctx, "GET", keys[0]))
		require.NoError(t, err)
		assert.Equal(t, "written-after-move", v)
	})

	t.Run("one key moved, one not: both read where they are", func(t *testing.T) {
		c := start(t)
		keys, o, _ := pair(t, "p:", 2)
		set(t, o, "SET", keys[0], "a")
		set(t, o, "SET", keys[1], "10")
		n, err := redis.Int(c.Do(ctx, "INCR", keys[1])) // moves keys[1]
		require.NoError(t, err)
		require.Equal(t, 11, n)
		vs, err := redis.Strings(c.Do(ctx, "MGET", keys[0], keys[1]))
		require.NoError(t, err)
		require.Len(t, vs, 2)
		assert.Equal(t, []string{"a", "11"}, vs)
	})

	t.Run("one key moved by another process, one not: both read where they are", func(t *testing.T) {
		c := start(t)
		keys, o, nw := pair(t, "o:", 2)
		set(t, o, "SET", keys[0], "at-old")
		set(t, nw, "SET", keys[1], "at-new")
		vs, err := redis.Strings(c.Do(ctx, "MGET", keys[0], keys[1]))
		require.NoError(t, err)
		require.Len(t, vs, 2)
		assert.Equal(t, []string{"at-old", "at-new"}, vs)
	})

	t.Run("a missing key: nil, and a later write lands at the new owner", func(t *testing.T) {
		c := start(t)
		keys, _, nw := pair(t, "x:", 1)
		v, err := c.Do(ctx, "GET", keys[0])
		require.NoError(t, err)
		assert.Nil(t, v)
		_, err = c.Do(ctx, "SET", keys[0], "new")
		require.NoError(t, err)
		assert.Equal(t, []string{nw}, holders(t, servers, keys[0]))
	})

	t.Run("a read then a read-modify-write continues the old value", func(t *testing.T) {
		c := start(t)
		keys, o, nw := pair(t, "r:", 1)
		set(t, o, "SET", keys[0], "41")
		v, err := redis.Int(c.Do(ctx, "GET", keys[0]))
		require.NoError(t, err)
		assert.Equal(t, 41, v)
		n, err := redis.Int(c.Do(ctx, "INCR", keys[0]))
		require.NoError(t, err)
		assert.Equal(t, 42, n)
		assert.Equal(t, []string{nw}, holders(t, servers, keys[0]))
	})

	t.Run("a read-only command's error reply comes from the old owner", func(t *testing.T) {
		c := start(t)
		keys, o, _ := pair(t, "e:", 1)
		set(t, o, "SET", keys[0], "a string")
		_, err := c.Do(ctx, "LLEN", keys[0])
		var re redis.Error
		require.ErrorAs(t, err, &re)
		assert.Contains(t, err.Error(), "WRONGTYPE")
		assert.Equal(t, []string{o}, holders(t, servers, keys[0]))
	})

	t.Run("HSCAN moves the key first: its cursor belongs to one server", func(t *testing.T) {
		c := start(t)
		keys, o, nw := pair(t, "h:", 1)
		set(t, o, "HSET", keys[0], "f1", "a", "f2", "b")
		v, err := redis.Values(c.Do(ctx, "HSCAN", keys[0], 0))
		require.NoError(t, err)
		require.Len(t, v, 2)
		fields, err := redis.StringMap(v[1], nil)
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"f1": "a", "f2": "b"}, fields)
		assert.Equal(t, []string{nw}, holders(t, servers, keys[0]))
	})

	t.Run("a pipeline of reads and writes on moving and staying keys", func(t *testing.T) {
		c := start(t)
		keys, o, nw := pair(t, "q:", 2)
		stay := staying(t, "q-stay:")
		set(t, o, "SET", keys[0], "read-me")
		set(t, o, "SET", keys[1], "5")
		_, err := c.Do(ctx, "SET", stay, "here")
		require.NoError(t, err)
		p := c.Pipeline()
		p.Send("GET", keys[0])
		p.Send("INCRBY", keys[1], 2)
		p.Send("GET", stay)
		p.Send("STRLEN", keys[0])
		p.Send("GET", keys[1])
		res, err := p.Exec(ctx)
		require.NoError(t, err)
		require.Len(t, res, 5)
		for i, r := range res {
			require.NoError(t, r.Err, "command %d", i)
		}
		got := []string{}
		for _, i := range []int{0, 2, 4} {
			s, err := redis.String(res[i].Reply, nil)
			require.NoError(t, err)
			got = append(got, s)
		}
		assert.Equal(t, []string{"read-me", "here", "7"}, got)
		assert.Equal(t, int64(7), res[1].Reply)
		assert.Equal(t, int64(len("read-me")), res[3].Reply)
		assert.Equal(t, []string{o}, holders(t, servers, keys[0]), "read only: stays")
		assert.Equal(t, []string{nw}, holders(t, servers, keys[1]), "written: moved")
	})
}
