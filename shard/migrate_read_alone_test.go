package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMigrationReadAloneAtTheOldOwner: a read whose own reply says
// whether its key exists (GET nil, TTL -2, an empty hash, ...) is sent to
// the key's old owner by itself, without MULTI, EXISTS and EXEC, and
// settled as the transaction would be: the key there → that reply; the
// key missing there → the new owner's reply; another type there → the
// WRONGTYPE error, and the key stays where it is. The servers' own
// command counts show what was sent.
func TestMigrationReadAloneAtTheOldOwner(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	byAddr := serversByAddr(servers)

	type state struct {
		setup []string // creates the key (the key is appended after the command name)
		want  any      // the read's reply
	}
	tests := []struct {
		cmd      string
		old      state // the key at its old owner
		missing  any   // the reply when the key is nowhere
		atNew    state // the key already at its new owner only
		wrongOld []string
	}{
		{"GET", state{[]string{"SET", "v"}, []byte("v")}, nil,
			state{[]string{"SET", "new"}, []byte("new")}, []string{"RPUSH", "x"}},
		{"EXISTS", state{[]string{"SET", "v"}, int64(1)}, int64(0),
			state{[]string{"SET", "new"}, int64(1)}, nil},
		{"TYPE", state{[]string{"SET", "v"}, "string"}, "none",
			state{[]string{"RPUSH", "x"}, "list"}, nil},
		{"TTL", state{[]string{"SET", "v"}, int64(-1)}, int64(-2),
			state{[]string{"SET", "new", "EX", "100000"}, nil}, nil},
		{"PTTL", state{[]string{"SET", "v"}, int64(-1)}, int64(-2),
			state{[]string{"SET", "new", "PX", "100000000"}, nil}, nil},
		{"HGETALL", state{[]string{"HSET", "f", "v"}, []any{[]byte("f"), []byte("v")}}, []any{},
			state{[]string{"HSET", "g", "w"}, []any{[]byte("g"), []byte("w")}}, []string{"SET", "x"}},
		{"HLEN", state{[]string{"HSET", "f", "v"}, int64(1)}, int64(0),
			state{[]string{"HSET", "a", "1", "b", "2"}, int64(2)}, []string{"SET", "x"}},
		{"SMEMBERS", state{[]string{"SADD", "m"}, []any{[]byte("m")}}, []any{},
			state{[]string{"SADD", "n"}, []any{[]byte("n")}}, []string{"SET", "x"}},
		{"SCARD", state{[]string{"SADD", "m"}, int64(1)}, int64(0),
			state{[]string{"SADD", "a", "b"}, int64(2)}, []string{"SET", "x"}},
		{"LLEN", state{[]string{"RPUSH", "e"}, int64(1)}, int64(0),
			state{[]string{"RPUSH", "a", "b", "c"}, int64(3)}, []string{"SET", "x"}},
		{"ZCARD", state{[]string{"ZADD", "1", "m"}, int64(1)}, int64(0),
			state{[]string{"ZADD", "1", "a", "2", "b"}, int64(2)}, []string{"SET", "x"}},
	}
	keys := movingKeys(t, from, to, "alone:", 4*len(tests))
	require.Len(t, keys, 4*len(tests))
	c := newClient(t, armedConfig(from, to))

	counts := func(name string) map[string]int {
		out := map[string]int{}
		for _, s := range servers {
			n, err := s.CommandCalls(name)
			require.NoError(t, err)
			out[s.Addr] = n
		}
		return out
	}
	multiBefore, migrateBefore := counts("multi"), counts("migrate")
	create := func(s *redistest.Server, setup []string, key string) {
		t.Helper()
		args := append([]string{setup[0], key}, setup[1:]...)
		_, err := s.Do(args...)
		require.NoError(t, err, "%v", args)
	}
	for i, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			kOld, kMissing, kNew, kWrong := keys[4*i], keys[4*i+1], keys[4*i+2], keys[4*i+3]

			oldSrv := byAddr[ringOwner(t, from, kOld)]
			create(oldSrv, tt.old.setup, kOld)
			got, err := c.Do(ctx, tt.cmd, kOld)
			require.NoError(t, err)
			assert.Equal(t, tt.old.want, got, "key at its old owner")
			n, err := oldSrv.Do("EXISTS", kOld)
			require.NoError(t, err)
			assert.Equal(t, "1", n, "a read moved the key")

			got, err = c.Do(ctx, tt.cmd, kMissing)
			require.NoError(t, err)
			assert.Equal(t, tt.missing, got, "key nowhere")

			create(byAddr[ringOwner(t, to, kNew)], tt.atNew.setup, kNew)
			got, err = c.Do(ctx, tt.cmd, kNew)
			require.NoError(t, err)
			switch tt.cmd {
			case "TTL":
				ttl, ok := got.(int64)
				assert.True(t, ok && ttl > 99000 && ttl <= 100000, "TTL at the new owner: %v", got)
			case "PTTL":
				ttl, ok := got.(int64)
				assert.True(t, ok && ttl > 99000000 && ttl <= 100000000, "PTTL at the new owner: %v", got)
			default:
				assert.Equal(t, tt.atNew.want, got, "key already at its new owner")
			}

			if tt.wrongOld == nil {
				return
			}
			wrongSrv := byAddr[ringOwner(t, from, kWrong)]
			create(wrongSrv, tt.wrongOld, kWrong)
			_, err = c.Do(ctx, tt.cmd, kWrong)
			var re redis.Error
			require.ErrorAs(t, err, &re)
			assert.True(t, strings.HasPrefix(string(re), "WRONGTYPE"), "%v", err)
			n, err = wrongSrv.Do("EXISTS", kWrong)
			require.NoError(t, err)
			assert.Equal(t, "1", n, "a refused read moved the key")
		})
	}
	assert.Equal(t, multiBefore, counts("multi"), "a read that needs no EXISTS ran in a transaction")
	assert.Equal(t, migrateBefore, counts("migrate"), "a read moved a key")
	info, ok := c.Migration()
	require.True(t, ok)
	assert.GreaterOrEqual(t, info.OldReads, int64(len(tests)), "reads answered at the old owners")
}

// TestMigrationReadsAloneAndInTransactionsInOnePipeline: a pipeline
// mixing reads sent alone (GET, HLEN) with one that still needs EXISTS
// beside it (HGET: a nil reply does not say the key is missing) and a key
// that has left its old owner answers each in order, on both kinds of
// old owner reply.
func TestMigrationReadsAloneAndInTransactionsInOnePipeline(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	byAddr := serversByAddr(servers)
	keys := movingKeys(t, from, to, "alonepipe:", 4)
	require.Len(t, keys, 4)
	c := newClient(t, armedConfig(from, to))

	_, err := byAddr[ringOwner(t, from, keys[0])].Do("SET", keys[0], "a")
	require.NoError(t, err)
	_, err = byAddr[ringOwner(t, from, keys[1])].Do("HSET", keys[1], "f", "v", "g", "w")
	require.NoError(t, err)
	_, err = byAddr[ringOwner(t, to, keys[2])].Do("SET", keys[2], "moved")
	require.NoError(t, err)

	p := c.Pipeline()
	p.Send("GET", keys[0])
	p.Send("HGET", keys[1], "f")
	p.Send("HGET", keys[1], "nofield")
	p.Send("HLEN", keys[1])
	p.Send("GET", keys[2])
	p.Send("GET", keys[3])
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 6)
	want := []any{[]byte("a"), []byte("v"), nil, int64(2), []byte("moved"), nil}
	for i, w := range want {
		assert.NoError(t, res[i].Err, "reply %d", i)
		assert.Equal(t, w, res[i].Reply, "reply %d", i)
	}
	for _, k := range keys[:2] {
		n, err := byAddr[ringOwner(t, from, k)].Do("EXISTS", k)
		require.NoError(t, err)
		assert.Equal(t, "1", n, "a read moved %s", k)
	}
}
