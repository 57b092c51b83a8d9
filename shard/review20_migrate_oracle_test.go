package shard_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// oracleCase is one command on keys a, b and c of one hash tag whose owner
// changes, each placed as a migration leaves it: at its old owner
// ("old"), already moved ("new"), or at both after a MIGRATE that timed
// out after its RESTORE ("both"), or nowhere (not in setup).
type oracleCase struct {
	name  string
	setup map[string][]string // key letter -> the command that creates it; "K" stands for the key
	state map[string]string   // key letter -> "old", "new" or "both"
	cmd   []string            // "a", "b" and "c" stand for the keys
}

// TestReview20MigrationCommandsMatchOneServer: every command of the table,
// sent through a client migrating a ring of one shard to two, answers
// what one server holding the same data answers, and leaves each key with
// the type, value and presence of an expiry that server leaves it with,
// as the migrating client and both topologies see it afterwards: reads
// whose reply does not show presence (TYPE, STRLEN, OBJECT ENCODING,
// SMISMEMBER, ...), multi-key commands whose keys are partly moved
// (SUNIONSTORE, ZUNIONSTORE, RENAME, COPY, LMOVE, SMOVE, SORT STORE, BITOP,
// PFMERGE, ...), counting commands with a key at both places (DEL, UNLINK,
// EXISTS, TOUCH), expiry commands and SET's forms, and scripts.
func TestReview20MigrationCommandsMatchOneServer(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from, to := ringConfig(servers[1:2]), ringConfig(servers[1:3])
	checkAgainstOneServer(t, servers[0], from, to)
}

// TestReview20MigrationIntoAClusterCommandsMatchOneServer is
// TestReview20MigrationCommandsMatchOneServer for a ring moving into a
// Redis Cluster.
func TestReview20MigrationIntoAClusterCommandsMatchOneServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cl := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	checkAgainstOneServer(t, servers[0], ringConfig(servers[1:3]), clusterConfig(cl.Seeds()...))
}

// TestReview20MigrationOutOfAClusterCommandsMatchOneServer is
// TestReview20MigrationCommandsMatchOneServer for a Redis Cluster moving
// into a ring.
func TestReview20MigrationOutOfAClusterCommandsMatchOneServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cl := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	checkAgainstOneServer(t, servers[0], clusterConfig(cl.Seeds()...), ringConfig(servers[1:3]))
}

// doer is a client's Do.
type doer interface {
	Do(context.Context, string, ...any) (any, error)
}

// checkAgainstOneServer runs the table of
// TestReview20MigrationCommandsMatchOneServer through clients migrating
// from from to to, each case on a fresh client (nothing known moved), and
// the same commands on ref, a server of its own.
func checkAgainstOneServer(t *testing.T, refSrv *redistest.Server, from, to shard.Config) {
	ctx := context.Background()
	rc, err := redis.Dial("tcp", refSrv.Addr)
	require.NoError(t, err)
	defer rc.Close()
	pf, pt := newClient(t, from), newClient(t, to)
	var tags []string
	for i := 0; len(tags) < 64; i++ {
		tg := fmt.Sprintf("t%d", i)
		k := "{" + tg + "}a"
		nf, err1 := pf.Router().Route(k)
		nt, err2 := pt.Router().Route(k)
		require.NoError(t, err1)
		require.NoError(t, err2)
		if nf.Addr != nt.Addr {
			tags = append(tags, tg)
		}
	}
	cases := []oracleCase{
		{"TYPE new", map[string][]string{"a": {"RPUSH", "K", "x"}}, map[string]string{"a": "new"}, []string{"TYPE", "a"}},
		{"OBJECT ENCODING new", map[string][]string{"a": {"RPUSH", "K", "x"}}, map[string]string{"a": "new"}, []string{"OBJECT", "ENCODING", "a"}},
		{"STRLEN new", map[string][]string{"a": {"SET", "K", "xyz"}}, map[string]string{"a": "new"}, []string{"STRLEN", "a"}},
		{"STRLEN old", map[string][]string{"a": {"SET", "K", "xyz"}}, map[string]string{"a": "old"}, []string{"STRLEN", "a"}},
		{"GETRANGE both", map[string][]string{"a": {"SET", "K", "xyz"}}, map[string]string{"a": "both"}, []string{"GETRANGE", "a", "0", "-1"}},
		{"BITCOUNT old", map[string][]string{"a": {"SET", "K", "xyz"}}, map[string]string{"a": "old"}, []string{"BITCOUNT", "a"}},
		{"SMISMEMBER new", map[string][]string{"a": {"SADD", "K", "x"}}, map[string]string{"a": "new"}, []string{"SMISMEMBER", "a", "x", "y"}},
		{"SUNIONSTORE part", map[string][]string{"a": {"SADD", "K", "x"}, "b": {"SADD", "K", "y"}}, map[string]string{"a": "old", "b": "new"}, []string{"SUNIONSTORE", "c", "a", "b"}},
		{"SUNIONSTORE dst old", map[string][]string{"a": {"SADD", "K", "x"}, "c": {"SADD", "K", "z"}}, map[string]string{"a": "new", "c": "old"}, []string{"SUNIONSTORE", "c", "a", "b"}},
		{"ZUNIONSTORE part", map[string][]string{"a": {"ZADD", "K", "1", "x"}, "b": {"ZADD", "K", "2", "y"}}, map[string]string{"a": "old", "b": "new"}, []string{"ZUNIONSTORE", "c", "2", "a", "b"}},
		{"RENAME old to new", map[string][]string{"a": {"SET", "K", "1"}, "b": {"SET", "K", "2"}}, map[string]string{"a": "old", "b": "new"}, []string{"RENAME", "a", "b"}},
		{"RENAMENX old, dst old", map[string][]string{"a": {"SET", "K", "1"}, "b": {"SET", "K", "2"}}, map[string]string{"a": "new", "b": "old"}, []string{"RENAMENX", "a", "b"}},
		{"COPY dst old", map[string][]string{"a": {"SET", "K", "1"}, "b": {"SET", "K", "2"}}, map[string]string{"a": "new", "b": "old"}, []string{"COPY", "a", "b"}},
		{"LMOVE", map[string][]string{"a": {"RPUSH", "K", "1"}, "b": {"RPUSH", "K", "2"}}, map[string]string{"a": "new", "b": "old"}, []string{"LMOVE", "a", "b", "LEFT", "RIGHT"}},
		{"SMOVE", map[string][]string{"a": {"SADD", "K", "m"}, "b": {"SADD", "K", "n"}}, map[string]string{"a": "old", "b": "new"}, []string{"SMOVE", "a", "b", "m"}},
		{"SORT STORE", map[string][]string{"a": {"RPUSH", "K", "3", "1", "2"}, "b": {"SET", "K", "x"}}, map[string]string{"a": "new", "b": "old"}, []string{"SORT", "a", "STORE", "b"}},
		{"BITOP", map[string][]string{"a": {"SET", "K", "ab"}, "b": {"SET", "K", "cd"}}, map[string]string{"a": "old", "b": "new"}, []string{"BITOP", "OR", "c", "a", "b"}},
		{"PFMERGE", map[string][]string{"a": {"PFADD", "K", "x"}, "b": {"PFADD", "K", "y"}}, map[string]string{"a": "old", "b": "new"}, []string{"PFMERGE", "c", "a", "b"}},
		{"PFCOUNT", map[string][]string{"a": {"PFADD", "K", "x"}, "b": {"PFADD", "K", "y"}}, map[string]string{"a": "old", "b": "new"}, []string{"PFCOUNT", "a", "b"}},
		{"DEL both", map[string][]string{"a": {"SET", "K", "1"}, "b": {"SET", "K", "2"}}, map[string]string{"a": "both", "b": "old"}, []string{"DEL", "a", "b"}},
		{"UNLINK both", map[string][]string{"a": {"SET", "K", "1"}, "b": {"SET", "K", "2"}}, map[string]string{"a": "both", "b": "new"}, []string{"UNLINK", "a", "b"}},
		{"EXISTS both", map[string][]string{"a": {"SET", "K", "1"}, "b": {"SET", "K", "2"}}, map[string]string{"a": "both", "b": "new"}, []string{"EXISTS", "a", "b", "a"}},
		{"EXISTS both old", map[string][]string{"a": {"SET", "K", "1"}, "b": {"SET", "K", "2"}}, map[string]string{"a": "both", "b": "old"}, []string{"EXISTS", "a", "b", "a"}},
		{"TOUCH both", map[string][]string{"a": {"SET", "K", "1"}, "b": {"SET", "K", "2"}}, map[string]string{"a": "both", "b": "new"}, []string{"TOUCH", "a", "b"}},
		{"EXPIRE", map[string][]string{"a": {"SET", "K", "1"}}, map[string]string{"a": "old"}, []string{"EXPIRE", "a", "1000"}},
		{"PERSIST", map[string][]string{"a": {"SET", "K", "1", "EX", "1000"}}, map[string]string{"a": "old"}, []string{"PERSIST", "a"}},
		{"GETEX", map[string][]string{"a": {"SET", "K", "1"}}, map[string]string{"a": "old"}, []string{"GETEX", "a", "EX", "1000"}},
		{"GETDEL", map[string][]string{"a": {"SET", "K", "1"}}, map[string]string{"a": "both"}, []string{"GETDEL", "a"}},
		{"SET GET", map[string][]string{"a": {"SET", "K", "1", "EX", "1000"}}, map[string]string{"a": "old"}, []string{"SET", "a", "2", "GET"}},
		{"SET KEEPTTL", map[string][]string{"a": {"SET", "K", "1", "EX", "1000"}}, map[string]string{"a": "old"}, []string{"SET", "a", "2", "KEEPTTL"}},
		{"SET blind", map[string][]string{"a": {"SET", "K", "1", "EX", "1000"}}, map[string]string{"a": "old"}, []string{"SET", "a", "2"}},
		{"SET blind list", map[string][]string{"a": {"RPUSH", "K", "1"}}, map[string]string{"a": "old"}, []string{"SET", "a", "2"}},
		{"SETEX blind", map[string][]string{"a": {"SET", "K", "1"}}, map[string]string{"a": "old"}, []string{"SETEX", "a", "1000", "2"}},
		{"MSETNX", map[string][]string{"a": {"SET", "K", "1"}}, map[string]string{"a": "old"}, []string{"MSETNX", "a", "1", "b", "2"}},
		{"MSET", map[string][]string{"a": {"SET", "K", "1", "EX", "1000"}}, map[string]string{"a": "old"}, []string{"MSET", "a", "5", "b", "2"}},
		{"MGET", map[string][]string{"a": {"SET", "K", "1"}, "b": {"SET", "K", "2"}}, map[string]string{"a": "old", "b": "new"}, []string{"MGET", "a", "b"}},
		{"EVAL", map[string][]string{"a": {"SET", "K", "1"}}, map[string]string{"a": "old"}, []string{"EVAL", "return redis.call('INCR', KEYS[1])", "1", "a"}},
		{"EVAL_RO", map[string][]string{"a": {"SET", "K", "1"}}, map[string]string{"a": "old"}, []string{"EVAL_RO", "return redis.call('GET', KEYS[1])", "1", "a"}},
		{"LMPOP", map[string][]string{"a": {"RPUSH", "K", "1"}, "b": {"RPUSH", "K", "2"}}, map[string]string{"a": "new", "b": "old"}, []string{"LMPOP", "2", "b", "a", "LEFT"}},
		{"SINTERCARD", map[string][]string{"a": {"SADD", "K", "1", "2"}, "b": {"SADD", "K", "2"}}, map[string]string{"a": "new", "b": "old"}, []string{"SINTERCARD", "2", "a", "b"}},
		{"ZRANGESTORE", map[string][]string{"a": {"ZADD", "K", "1", "x"}, "c": {"SET", "K", "2"}}, map[string]string{"a": "new", "c": "old"}, []string{"ZRANGESTORE", "c", "a", "0", "-1"}},
		{"GEOSEARCHSTORE", map[string][]string{"a": {"GEOADD", "K", "13.36", "38.11", "p"}, "c": {"SET", "K", "2"}}, map[string]string{"a": "new", "c": "old"}, []string{"GEOSEARCHSTORE", "c", "a", "FROMLONLAT", "13.36", "38.11", "BYRADIUS", "10", "km"}},
		{"GEORADIUS STORE", map[string][]string{"a": {"GEOADD", "K", "13.36", "38.11", "p"}, "c": {"SET", "K", "2"}}, map[string]string{"a": "new", "c": "old"}, []string{"GEORADIUS", "a", "13.36", "38.11", "10", "km", "STORE", "c"}},
		{"XADD", map[string][]string{"a": {"XADD", "K", "1-1", "f", "v"}}, map[string]string{"a": "old"}, []string{"XADD", "a", "2-1", "f", "v"}},
		{"XLEN", map[string][]string{"a": {"XADD", "K", "1-1", "f", "v"}}, map[string]string{"a": "new"}, []string{"XLEN", "a"}},
		{"SETNX", map[string][]string{"a": {"SET", "K", "1"}}, map[string]string{"a": "old"}, []string{"SETNX", "a", "2"}},
		{"APPEND", map[string][]string{"a": {"SET", "K", "1"}}, map[string]string{"a": "old"}, []string{"APPEND", "a", "2"}},
		{"HSETNX", map[string][]string{"a": {"HSET", "K", "f", "1"}}, map[string]string{"a": "old"}, []string{"HSETNX", "a", "f", "2"}},
		{"OBJECT REFCOUNT", map[string][]string{"a": {"SET", "K", "1"}}, map[string]string{"a": "old"}, []string{"OBJECT", "REFCOUNT", "a"}},
		{"EXPIRETIME", map[string][]string{"a": {"SET", "K", "1", "EXAT", "9999999999"}}, map[string]string{"a": "old"}, []string{"EXPIRETIME", "a"}},
		{"EXPIRETIME both", map[string][]string{"a": {"SET", "K", "1", "EXAT", "9999999999"}}, map[string]string{"a": "both"}, []string{"EXPIRETIME", "a"}},
		{"LPOS", map[string][]string{"a": {"RPUSH", "K", "x", "y"}}, map[string]string{"a": "new"}, []string{"LPOS", "a", "y"}},
		{"DUMP", map[string][]string{"a": {"RPUSH", "K", "x", "y"}}, map[string]string{"a": "new"}, []string{"DUMP", "a"}},
		{"DEL old", map[string][]string{"a": {"RPUSH", "K", "x", "y"}}, map[string]string{"a": "old"}, []string{"DEL", "a", "b"}},
		{"SORT_RO", map[string][]string{"a": {"RPUSH", "K", "3", "1"}}, map[string]string{"a": "old"}, []string{"SORT_RO", "a"}},
		{"SRANDMEMBER", map[string][]string{"a": {"SADD", "K", "x"}}, map[string]string{"a": "new"}, []string{"SRANDMEMBER", "a"}},
	}
	require.GreaterOrEqual(t, len(tags), len(cases))
	for i, tc := range cases {
		tag := tags[i]
		key := func(l string) string { return "{" + tag + "}" + l }
		_, err := rc.Do("FLUSHALL")
		require.NoError(t, err)
		for l, st := range tc.setup {
			args := []any{}
			for _, s := range st[1:] {
				if s == "K" {
					args = append(args, key(l))
				} else {
					args = append(args, s)
				}
			}
			_, err := rc.Do(st[0], args...)
			require.NoError(t, err, tc.name)
			var conns []doer
			switch tc.state[l] {
			case "old":
				conns = []doer{pf}
			case "new":
				conns = []doer{pt}
			case "both":
				conns = []doer{pf, pt}
			}
			for _, c := range conns {
				_, err := c.Do(ctx, st[0], args...)
				require.NoError(t, err, tc.name)
			}
		}
		args := []any{}
		for _, s := range tc.cmd[1:] {
			if len(s) == 1 && s >= "a" && s <= "c" {
				args = append(args, key(s))
			} else {
				args = append(args, s)
			}
		}
		want, werr := rc.Do(tc.cmd[0], args...)
		cl := newClient(t, armedConfig(from, to))
		got, gerr := cl.Do(ctx, tc.cmd[0], args...)
		cl.Close()
		c2 := newClient(t, armedConfig(from, to)) // knows nothing moved: reads where the keys are
		sameErr := (werr == nil && gerr == nil) || (werr != nil && gerr != nil && strings.Contains(gerr.Error(), werr.Error()))
		if !sameErr || !reflect.DeepEqual(want, got) {
			t.Errorf("%s: reply %#v %v, want %#v %v", tc.name, got, gerr, want, werr)
		}
		for _, l := range []string{"a", "b", "c"} {
			k := key(l)
			rv, _ := redis.Int(rc.Do("EXISTS", k))
			av, _ := redis.Int(pf.Do(ctx, "EXISTS", k))
			bv, _ := redis.Int(pt.Do(ctx, "EXISTS", k))
			cv, _ := redis.Int(c2.Do(ctx, "EXISTS", k))
			// Gone for one server: gone from both topologies; present:
			// present for a migrating client.
			if rv != cv || (rv == 0 && av+bv != 0) {
				t.Errorf("%s: key %s: ref %d old %d new %d migrating %d", tc.name, l, rv, av, bv, cv)
			}
			if rv == 0 {
				continue
			}
			rd, _ := redis.String(rc.Do("TYPE", k))
			sd, _ := redis.String(c2.Do(ctx, "TYPE", k))
			rt, _ := redis.Int64(rc.Do("PTTL", k))
			st, _ := redis.Int64(c2.Do(ctx, "PTTL", k))
			if rd != sd || (rt < 0) != (st < 0) {
				t.Errorf("%s: key %s: type/ttl %s %d, want %s %d", tc.name, l, sd, st, rd, rt)
			}
			if rd == "string" {
				r1, _ := redis.String(rc.Do("GET", k))
				s1, _ := redis.String(c2.Do(ctx, "GET", k))
				if r1 != s1 {
					t.Errorf("%s: key %s: value %q want %q", tc.name, l, s1, r1)
				}
			}
		}
		c2.Close()
	}
}
