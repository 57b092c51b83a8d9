package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClusterReplicaReads(t *testing.T) {
	ctx := context.Background()
	rc := clusterForTest(t)
	for _, policy := range []shard.ReadPolicy{shard.ReadReplicaRandom, shard.ReadReplicaLatency} {
		t.Run(string(policy), func(t *testing.T) {
			cfg := clusterConfig(rc.Seeds()...)
			cfg.Cluster.ReadFrom = policy
			c := newClient(t, cfg)
			const n = 300
			for i := 0; i < n; i++ {
				k := fmt.Sprintf("rr:%s:%d", policy, i)
				_, err := c.Do(ctx, "SET", k, i)
				require.NoError(t, err)
			}
			// Make sure the replicas have the writes before reading from them.
			err := c.ForEachMaster(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
				_, err := redis.DoContext(conn, ctx, "WAIT", 1, 2000)
				return err
			})
			require.NoError(t, err)
			for i := 0; i < n; i++ {
				v, err := redis.Int(c.Do(ctx, "GET", fmt.Sprintf("rr:%s:%d", policy, i)))
				require.NoError(t, err)
				assert.Equal(t, i, v)
			}
			var replicaCmds, masterMoved int64
			for _, st := range c.Stats().Nodes {
				if st.ReadOnly {
					replicaCmds += st.Commands
				}
				masterMoved += st.Moved
			}
			assert.GreaterOrEqual(t, replicaCmds, int64(n), "reads went to replicas")
			assert.Zero(t, masterMoved, "writes went to masters, reads to the masters' own replicas")
		})
	}
}

func TestClusterForEachNodeAndScan(t *testing.T) {
	ctx := context.Background()
	rc := clusterForTest(t)
	c := newClient(t, clusterConfig(rc.Seeds()...))
	var mu sync.Mutex
	roles := map[string]int{}
	err := c.ForEachNode(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		vals, err := redis.Values(redis.DoContext(conn, ctx, "ROLE"))
		if err != nil {
			return err
		}
		role, _ := redis.String(vals[0], nil)
		mu.Lock()
		roles[role]++
		mu.Unlock()
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]int{"master": 3, "slave": 3}, roles)

	p := c.Pipeline()
	for i := 0; i < 500; i++ {
		p.Send("SET", fmt.Sprintf("cscan:%d", i), i)
	}
	_, err = p.Exec(ctx)
	require.NoError(t, err)
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Match: "cscan:*", Count: 50})
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	require.NoError(t, s.Err())
	assert.Len(t, seen, 500)
}

// redigo's Script falls back from EVALSHA to EVAL on NOSCRIPT, through the routed connection.
func TestClusterScriptFallsBackToEval(t *testing.T) {
	rc := clusterForTest(t)
	c := newClient(t, clusterConfig(rc.Seeds()...))
	conn := c.Conn()
	defer conn.Close()
	script := redis.NewScript(2, `redis.call("SET", KEYS[1], ARGV[1]); return redis.call("INCR", KEYS[2])`)
	for i := 0; i < 30; i++ {
		n, err := redis.Int(script.Do(conn, fmt.Sprintf("{lua%d}a", i), fmt.Sprintf("{lua%d}b", i), i))
		require.NoError(t, err)
		assert.Equal(t, 1, n)
	}
	_, err := script.Do(conn, "{x}a", "{y}b", 1)
	assert.ErrorIs(t, err, shard.ErrCrossShard)
}
