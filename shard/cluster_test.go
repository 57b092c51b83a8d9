package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func clusterConfig(seeds ...string) shard.Config {
	return shard.Config{
		Mode:  shard.ModeCluster,
		Seeds: seeds,
		Pool:  pool.Options{DialTimeout: 3 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second},
		// As ringConfig: PINGs and dials may take long on a loaded
		// machine; a killed node still refuses them at once.
		Health: shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 3, Timeout: time.Second},
	}
}

// direct opens a plain redigo connection to one node.
func direct(t *testing.T, addr string) redis.Conn {
	t.Helper()
	conn, err := redis.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestClusterRoutingMatchesTheServer(t *testing.T) {
	ctx := context.Background()
	rc := clusterForTest(t)
	c := newClient(t, clusterConfig(rc.Seeds()[0]))
	seed := direct(t, rc.Seeds()[0])

	const n = 10000
	p := c.Pipeline()
	for i := 0; i < n; i++ {
		p.Send("SET", fmt.Sprintf("route:%d", i), i)
	}
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err)
	}
	owners := map[string]*redistest.Server{}
	for _, m := range rc.Masters() {
		owners[m.Addr] = m
	}
	conns := map[string]redis.Conn{}
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("route:%d", i)
		node, err := c.Router().Route(k)
		require.NoError(t, err)
		require.Contains(t, owners, node.Addr)
		if i%10 != 0 {
			continue
		}
		// The server agrees on the slot, and the routed master holds the key.
		slot, err := redis.Int(seed.Do("CLUSTER", "KEYSLOT", k))
		require.NoError(t, err)
		require.Equal(t, slot, cluster.Slot(k))
		if conns[node.Addr] == nil {
			conns[node.Addr] = direct(t, node.Addr)
		}
		v, err := redis.Int(conns[node.Addr].Do("GET", k))
		require.NoError(t, err, "key %s on %s", k, node.Addr)
		require.Equal(t, i, v)
	}
	// No redirects were needed: the table was right from the start.
	for _, st := range c.Stats().Nodes {
		assert.Zero(t, st.Moved, st.Node.Addr)
	}
}

func TestClusterDiscoveryFromAnySeed(t *testing.T) {
	ctx := context.Background()
	rc := clusterForTest(t)
	var want *cluster.Table
	for _, s := range rc.Seeds() {
		c := newClient(t, clusterConfig(s))
		tbl := c.Router().(*shard.ClusterRouter).Table()
		if want == nil {
			want = tbl
		}
		assert.True(t, want.Equal(tbl), "seed %s", s)
		assert.Len(t, c.Nodes(), 3)
	}
	// A dead seed first in the list is skipped.
	dead, err := redistest.FreePort()
	require.NoError(t, err)
	c := newClient(t, clusterConfig("127.0.0.1:"+strconv.Itoa(dead), rc.Seeds()[3]))
	_, err = c.Do(ctx, "SET", "disc:k", "v")
	require.NoError(t, err)
	// No live seed at all: a clear error naming the seeds.
	_, err = shard.New(ctx, clusterConfig("127.0.0.1:"+strconv.Itoa(dead)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), strconv.Itoa(dead))
	// A server that is not a cluster node.
	plain := redistest.StartTB(t, redistest.Options{})
	_, err = shard.New(ctx, clusterConfig(plain.Addr))
	assert.ErrorIs(t, err, cluster.ErrNotCluster)
}

func TestClusterMultiKeyCommands(t *testing.T) {
	ctx := context.Background()
	rc := clusterForTest(t)
	c := newClient(t, clusterConfig(rc.Seeds()...))
	const n = 1000
	var args, keys []any
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("mk:%d", i)
		args = append(args, k, i)
		keys = append(keys, k)
	}
	_, err := c.Do(ctx, "MSET", args...)
	require.NoError(t, err)
	vals, err := redis.Ints(c.Do(ctx, "MGET", keys...))
	require.NoError(t, err)
	for i := range vals {
		require.Equal(t, i, vals[i])
	}
	cnt, err := redis.Int(c.Do(ctx, "EXISTS", keys...))
	require.NoError(t, err)
	assert.Equal(t, n, cnt)
	cnt, err = redis.Int(c.Do(ctx, "DEL", keys[:500]...))
	require.NoError(t, err)
	assert.Equal(t, 500, cnt)

	// Not splittable: MSETNX across slots, RENAME across slots.
	_, err = c.Do(ctx, "MSETNX", "a", "1", "b", "2")
	var cse *shard.CrossShardError
	require.ErrorAs(t, err, &cse)
	assert.Contains(t, err.Error(), "slot")
	_, err = c.Do(ctx, "RENAME", "a", "b")
	require.ErrorAs(t, err, &cse)
	// Same slot through a tag: fine.
	_, err = c.Do(ctx, "MSETNX", "{t}a", "1", "{t}b", "2")
	require.NoError(t, err)
	_, err = c.Do(ctx, "RENAME", "{t}a", "{t}c")
	require.NoError(t, err)
}

func TestClusterPipelineAcrossNodes(t *testing.T) {
	ctx := context.Background()
	rc := clusterForTest(t)
	c := newClient(t, clusterConfig(rc.Seeds()...))
	p := c.Pipeline()
	const n = 3000
	for i := 0; i < n; i++ {
		p.Send("SET", fmt.Sprintf("pl:%d", i), i)
		p.Send("INCR", fmt.Sprintf("pl:%d", i))
		p.Send("GET", fmt.Sprintf("pl:%d", i))
	}
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		require.NoError(t, res[3*i+2].Err)
		v, _ := redis.Int(res[3*i+2].Reply, nil)
		require.Equal(t, i+1, v)
	}
}
