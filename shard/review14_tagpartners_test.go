package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each key below must be stored on the server of its reference tag, taken
// as a key of its own (each tag listed hashes whole under its rule), when
// written by a split MSET and by a pipeline of SETs. The tags come from
// the reference implementations, not from shardis:
//
//   - cluster: Redis keyHashSlot (src/cluster.c, 7.0): the first '{', the
//     first '}' after it, at least one byte between, else the whole key.
//   - jedis: Jedis Sharded.getKeyTag, the first match of \{(.+?)\} (lazy:
//     at least one character, then up to the first '}'); foo{}{bar} and {}}
//     are rows of the golden file hashtag/testdata/keytag.tsv.
//   - "$$" and "::": twemproxy server_pool_idx (src/nc_server.c): tag_start
//     = the first hash_tag[0], tag_end = the first hash_tag[1] from
//     tag_start+1, used when tag_end - tag_start > 1.
func TestReview14TagPartnersShareAServer(t *testing.T) {
	long := strings.Repeat("x", 600)
	cases := []struct {
		hash, tag string
		pairs     [][2]string // key, the reference's tag
	}{
		{"murmur3", "cluster", [][2]string{
			{"a}b{user:31}", "user:31"},
			{"foo{{bar-7}}zap", "{bar-7"},
			{"x{acct-9}}", "acct-9"},
			{"u{élan}", "élan"},
			{"b{\xff\x00\n}", "\xff\x00\n"},
			{long + "{t1}", "t1"},
		}},
		{"jedis", "jedis", [][2]string{
			{"foo{}{bar}", "}{bar"},
			{"{}}", "}"},
			{"{{acct-5}}", "{acct-5"},
			{"x{}yy{zz}", "}yy{zz"},
			{"a{b1{c2}d}", "b1{c2"},
			{"{ab cd}", "ab cd"},
			{long + "{t2}", "t2"},
		}},
		{"ketama", "$$", [][2]string{
			{"$acct-1$b$", "acct-1"},
			{"user$1000$.x", "1000"},
			{"x$élan$", "élan"},
			{"{q}$user:8$", "user:8"},
			{long + "$t3$", "t3"},
		}},
		{"ketama", "::", [][2]string{
			{"user:1000:profile", "1000"},
			{"a:acct-3:c:d", "acct-3"},
			{"{q}:user-8:", "user-8"},
			{long + ":t4:", "t4"},
		}},
	}
	servers := redistest.StartNTB(t, 8, redistest.Options{})
	ctx := context.Background()
	for _, tc := range cases {
		cfg := ringConfig(servers)
		cfg.Hash, cfg.Tag = ring.Algorithm(tc.hash), tc.tag
		c := newClient(t, cfg)
		for _, pipelined := range []bool{false, true} {
			for _, s := range servers {
				_, err := s.Do("FLUSHALL")
				require.NoError(t, err)
			}
			var args []any
			for _, p := range tc.pairs {
				args = append(args, p[0], "k", p[1], "t")
			}
			if pipelined {
				pl := c.Pipeline()
				for i := 0; i < len(args); i += 2 {
					pl.Send("SET", args[i], args[i+1])
				}
				res, err := pl.Exec(ctx)
				require.NoError(t, err)
				for _, r := range res {
					require.NoError(t, r.Err)
				}
			} else {
				_, err := c.Do(ctx, "MSET", args...)
				require.NoError(t, err)
			}
			for _, p := range tc.pairs {
				var at []string
				for _, s := range servers {
					conn, err := redis.Dial("tcp", s.Addr)
					require.NoError(t, err)
					key, err := redis.Int(conn.Do("EXISTS", p[0]))
					require.NoError(t, err)
					tag, err := redis.Int(conn.Do("EXISTS", p[1]))
					require.NoError(t, err)
					conn.Close()
					if key == 1 {
						at = append(at, "key@"+s.Addr)
					}
					if tag == 1 {
						at = append(at, "tag@"+s.Addr)
					}
				}
				require.Len(t, at, 2, "%s %s: %q stored once, and %q", tc.hash, tc.tag, p[0], p[1])
				assert.Equal(t, strings.TrimPrefix(at[0], "key"), strings.TrimPrefix(at[1], "tag"),
					"%s %s pipelined=%v: %q and its tag %q", tc.hash, tc.tag, pipelined, p[0], p[1])
			}
		}
	}
}
