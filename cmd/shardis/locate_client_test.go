package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The client stores every key on the server that `shardis locate` names for
// the same configuration.
func TestClientRoutingMatchesLocate(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	for _, hash := range []string{"murmur3", "jedis", "ketama"} {
		t.Run(hash, func(t *testing.T) {
			ctx := context.Background()
			shards := []ring.Shard{
				{Name: "a", Addr: servers[0].Addr, Weight: 1},
				{Name: "b", Addr: servers[1].Addr, Weight: 2},
				{Name: "c", Addr: servers[2].Addr, Weight: 1},
			}
			client, err := shard.New(ctx, shard.Config{Shards: shards, Hash: ring.Algorithm(hash)})
			require.NoError(t, err)
			defer client.Close()
			const n = 10000
			keys := make([]string, n)
			p := client.Pipeline()
			for i := range keys {
				keys[i] = fmt.Sprintf("%s:key:%d", hash, i)
				p.Send("SET", keys[i], i)
			}
			res, err := p.Exec(ctx)
			require.NoError(t, err)
			for _, r := range res {
				require.NoError(t, r.Err)
			}

			list := fmt.Sprintf("%s:1 a,%s:2 b,%s:1 c", servers[0].Addr, servers[1].Addr, servers[2].Addr)
			code, out, errOut := runCLI(t, strings.Join(keys, "\n")+"\n", "locate", "--hash", hash, "--shards", list)
			require.Equal(t, 0, code, errOut)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			require.Len(t, lines, n)
			conns := make([]redis.Conn, len(servers))
			for i, s := range servers {
				conns[i], err = redis.Dial("tcp", s.Addr)
				require.NoError(t, err)
				defer conns[i].Close()
			}
			perShard := make([]int, len(servers))
			for i, line := range lines {
				f := strings.Split(line, "\t")
				require.Len(t, f, 3, line)
				require.Equal(t, keys[i], f[0])
				idx, err := strconv.Atoi(f[1])
				require.NoError(t, err)
				perShard[idx]++
				node, err := client.Router().Route(keys[i])
				require.NoError(t, err)
				require.Equal(t, servers[idx].Addr, node.Addr, "key %s", keys[i])
				if i%20 == 0 { // the key really is on that server
					v, err := redis.Int(conns[idx].Do("GET", keys[i]))
					require.NoError(t, err, "key %s on shard %d", keys[i], idx)
					require.Equal(t, i, v)
				}
			}
			for i, c := range conns {
				size, err := redis.Int(c.Do("DBSIZE"))
				require.NoError(t, err)
				assert.Equal(t, perShard[i], size, "shard %d holds exactly the keys locate assigns it", i)
				c.Do("FLUSHDB")
			}
		})
	}
}
