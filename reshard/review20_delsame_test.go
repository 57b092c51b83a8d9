package reshard

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// reloadWith lowers config name to 1 on the old node and reloads its
// dataset, which re-encodes the key's value (listpack or intset to
// hashtable or skiplist) without changing it.
func reloadWith(name string) func(redis.Conn) error {
	return func(c redis.Conn) error {
		if _, err := c.Do("CONFIG", "SET", name, "1"); err != nil {
			return err
		}
		_, err := c.Do("DEBUG", "RELOAD")
		return err
	}
}

// bigHash makes k a hash in hashtable encoding whose table is being
// rehashed: 1025 fields, one past a doubling of its table.
func bigHash(c redis.Conn) error {
	args := redis.Args{"k"}
	for i := range 1025 {
		args = args.Add(fmt.Sprintf("f%d", i), fmt.Sprintf("v%d", i))
	}
	_, err := c.Do("HSET", args...)
	return err
}

// readHash reads k, which takes the rehash of its table a step further:
// the order of DUMP's fields changes, the value does not.
func readHash(c redis.Conn) error {
	for range 20 {
		if _, err := c.Do("HGET", "k", "f1"); err != nil {
			return err
		}
	}
	return nil
}

// binKey is a key of bytes that are not text, a hash tag among them.
const binKey = "\x00{t}\xff\r\n"

func do(cmds ...[]any) func(redis.Conn) error {
	return func(c redis.Conn) error {
		for _, cmd := range cmds {
			if _, err := c.Do(cmd[0].(string), cmd[1:]...); err != nil {
				return err
			}
		}
		return nil
	}
}

func then(fs ...func(redis.Conn) error) func(redis.Conn) error {
	return func(c redis.Conn) error {
		for _, f := range fs {
			if err := f(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestReview20DumpMoveDeletesAnOldCopyReEncodedMeanwhile: the old copy of
// a key is deleted once restored only while it holds the value dumped. It
// was compared by DUMP payload, which changes with the value's encoding
// and, for a hashtable, with the progress of its rehash, which a mere
// read moves on: such an old copy, unchanged, stayed, the key at both
// nodes. It is now deleted; one written meanwhile (the payload changes
// too) still stays, whatever its type.
func TestReview20DumpMoveDeletesAnOldCopyReEncodedMeanwhile(t *testing.T) {
	cases := []struct {
		name         string
		setup, write func(redis.Conn) error
		kept         bool
		key          string // "k" when empty
	}{
		{"hash read while rehashed", bigHash, readHash, false, ""},
		{"hash re-encoded", do([]any{"HSET", "k", "a", "1", "b", "2"}), reloadWith("hash-max-listpack-entries"), false, ""},
		{"set re-encoded", do([]any{"SADD", "k", "1", "2", "3"}), reloadWith("set-max-intset-entries"), false, ""},
		{"zset re-encoded", do([]any{"ZADD", "k", "1", "a", "2.5", "b"}), reloadWith("zset-max-listpack-entries"), false, ""},
		{"binary key and value", do([]any{"HSET", binKey, "\x00\xff", "\r\n\x00", "\xff", ""}), reloadWith("hash-max-listpack-entries"), false, binKey},

		{"hash field changed while rehashed", bigHash, then(readHash, do([]any{"HSET", "k", "f1", "other"})), true, ""},
		{"hash field renamed while rehashed", bigHash, then(readHash, do([]any{"HDEL", "k", "f1"}, []any{"HSET", "k", "g1", "v1"})), true, ""},
		{"hash field added", do([]any{"HSET", "k", "a", "1"}), then(reloadWith("hash-max-listpack-entries"), do([]any{"HSET", "k", "b", "2"})), true, ""},
		{"set member replaced", do([]any{"SADD", "k", "1", "2", "3"}), then(reloadWith("set-max-intset-entries"), do([]any{"SREM", "k", "1"}, []any{"SADD", "k", "4"})), true, ""},
		{"zset score changed", do([]any{"ZADD", "k", "1", "a", "2", "b"}), then(reloadWith("zset-max-listpack-entries"), do([]any{"ZADD", "k", "3", "b"})), true, ""},
		{"list reordered", do([]any{"RPUSH", "k", "a", "b"}), do([]any{"LSET", "k", "0", "b"}, []any{"LSET", "k", "1", "a"}), true, ""},
		{"string changed", do([]any{"SET", "k", "a"}), do([]any{"SET", "k", "b"}), true, ""},
		{"stream added to", do([]any{"XADD", "k", "1-1", "f", "v"}), do([]any{"XADD", "k", "2-1", "f", "v"}), true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := cmp.Or(tc.key, "k")
			ctx := context.Background()
			r := newDumpRig(t, 0)
			c, err := redis.Dial("tcp", r.src.Addr)
			require.NoError(t, err)
			defer c.Close()
			require.NoError(t, tc.setup(c))
			before, err := redis.Bytes(c.Do("DUMP", k))
			require.NoError(t, err)
			digest, err := redis.Strings(c.Do("DEBUG", "DIGEST-VALUE", k))
			require.NoError(t, err)
			var hookErr error
			var after []byte
			var afterDigest []string
			testHookDelete = func(_ shard.Node, _ []string) {
				if hookErr = tc.write(c); hookErr == nil {
					after, hookErr = redis.Bytes(c.Do("DUMP", k))
				}
				if hookErr == nil {
					afterDigest, hookErr = redis.Strings(c.Do("DEBUG", "DIGEST-VALUE", k))
				}
			}
			defer func() { testHookDelete = nil }()
			moved, err := r.m.dumpMove(ctx, r.conn, r.src, r.dst, []string{k})
			require.NoError(t, err)
			require.NoError(t, hookErr)
			require.Equal(t, 1, moved, "k restored at the new node")
			require.False(t, bytes.Equal(before, after), "precondition: the old copy's DUMP changed between the mover's DUMP and its delete")
			n, err := redis.Int(c.Do("DBSIZE"))
			require.NoError(t, err)
			if tc.kept {
				require.Equal(t, 1, n, "the old copy, written after its DUMP, must stay (and no scratch key)")
				now, err := redis.Strings(c.Do("DEBUG", "DIGEST-VALUE", k))
				require.NoError(t, err)
				require.Equal(t, afterDigest, now, "the old copy written meanwhile was changed")
			} else {
				require.Equal(t, 0, n, "the old copy holds the value restored and must be gone (and no scratch key)")
			}
			dc, err := redis.Dial("tcp", r.dst.Addr)
			require.NoError(t, err)
			defer dc.Close()
			theirs, err := redis.Strings(dc.Do("DEBUG", "DIGEST-VALUE", k))
			require.NoError(t, err)
			require.Equal(t, digest, theirs, "the new node holds the value dumped")
		})
	}
}
