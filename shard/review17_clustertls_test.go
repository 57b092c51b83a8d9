package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A cluster of three masters that take TLS connections only (port 0,
// tls-port, tls-cluster yes, tls-replication yes): CLUSTER SHARDS gives
// each node's tls-port and no plain port, the client discovers every
// master at its TLS port and SET, GET and a cross-slot MGET work.
func TestReview17ClusterTLSOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{TLS: true})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	want := map[string]bool{}
	for _, s := range ms {
		want[s.Addr] = true
		// The servers are TLS-only, as configured.
		port, err := s.Do("CONFIG", "GET", "port")
		require.NoError(t, err)
		require.Equal(t, "port\n0", port)
	}
	shards, err := ms[0].Do("CLUSTER", "SHARDS")
	require.NoError(t, err)
	for _, s := range ms {
		require.Contains(t, shards, "tls-port\n"+strconv.Itoa(s.Port)+"\n", "CLUSTER SHARDS gives the TLS port of %s", s.Addr)
	}
	require.NotContains(t, shards, "\nport\n", "CLUSTER SHARDS of TLS-only nodes gives no plain port")

	cfg := clusterConfig(ms[0].Addr) // one seed: the others are discovered
	cfg.Pool.TLSConfig = ms[0].TLS.ClientConfig()
	c := newClient(t, cfg)
	nodes := c.Router().(*shard.ClusterRouter).AllNodes()
	require.Len(t, nodes, 3)
	for _, n := range nodes {
		require.True(t, want[n.Addr], "node %s is a master's TLS address %v", n.Addr, want)
	}

	// Keys on every master.
	var keys []string
	for i, s := range ms {
		k, _ := keyOnMaster(t, rc, s, fmt.Sprintf("tlsonly%d", i))
		keys = append(keys, k)
	}
	for i, k := range keys {
		_, err := c.Do(ctx, "SET", k, "v"+strconv.Itoa(i))
		require.NoError(t, err)
		v, err := redis.String(c.Do(ctx, "GET", k))
		require.NoError(t, err)
		require.Equal(t, "v"+strconv.Itoa(i), v)
		got, err := ms[i].Do("GET", k)
		require.NoError(t, err)
		require.Equal(t, "v"+strconv.Itoa(i), strings.TrimSpace(got), "the key is on its master")
	}
	args := make([]any, 0, len(keys)+1)
	for _, k := range keys {
		args = append(args, k)
	}
	args = append(args, "tlsonly-missing")
	vs, err := redis.Values(c.Do(ctx, "MGET", args...))
	require.NoError(t, err)
	require.Len(t, vs, 4)
	for i := range keys {
		v, err := redis.String(vs[i], nil)
		require.NoError(t, err)
		require.Equal(t, "v"+strconv.Itoa(i), v)
	}
	require.Nil(t, vs[3])
	for _, st := range c.Stats().Nodes {
		require.True(t, want[st.Node.Addr], "%s is a TLS address", st.Node.Addr)
	}
}
