package shard_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// An operator switches a running cluster from IP endpoints to hostname
// endpoints (cluster-announce-hostname, cluster-preferred-endpoint-type
// hostname, by CONFIG SET): the client's next refresh names every node
// anew, by hostname. Commands keep working on the new names, and a
// sharded subscription keeps receiving.
func TestReview15EndpointTypeSwitchedAtRunTime(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = 200 * time.Millisecond
	c := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const channel = "endpoint-switch"
	sub, err := c.SSubscribe(ctx, channel)
	require.NoError(t, err)
	defer sub.Close()
	for i := 0; i < 20; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("endpoint-switch:%d", i), i)
		require.NoError(t, err)
	}

	for _, s := range rc.Nodes {
		_, err := s.Do("CONFIG", "SET", "cluster-announce-hostname", "localhost")
		require.NoError(t, err)
	}
	for _, s := range rc.Nodes {
		_, err := s.Do("CONFIG", "SET", "cluster-preferred-endpoint-type", "hostname")
		require.NoError(t, err)
	}
	byHostname := func() bool {
		nodes := c.Router().(*shard.ClusterRouter).AllNodes()
		if len(nodes) != len(rc.Nodes) {
			return false
		}
		for _, n := range nodes {
			if host, _, err := net.SplitHostPort(n.Addr); err != nil || host != "localhost" {
				return false
			}
		}
		return true
	}
	waitFor(t, 30*time.Second, "the client to name every node by hostname", byHostname)

	for i := 0; i < 20; i++ {
		k := fmt.Sprintf("endpoint-switch:%d", i)
		v, err := redis.Int(c.Do(ctx, "GET", k))
		require.NoError(t, err, "GET %s", k)
		require.Equal(t, i, v)
	}
	// The old names leave Stats (and the health checks) once the
	// topology without them is installed, or at the next health check.
	waitFor(t, 10*time.Second, "Stats to list the nodes by hostname only", func() bool {
		for _, st := range c.Stats().Nodes {
			if !strings.HasPrefix(st.Node.Addr, "localhost:") {
				return false
			}
		}
		return true
	})

	// The subscription is now on a node named by hostname: a message
	// published reaches it.
	got := make(chan string, 16)
	go func() {
		for {
			m, err := sub.Receive(ctx)
			if err != nil {
				close(got)
				return
			}
			if msg, ok := m.(redis.Message); ok {
				got <- string(msg.Data)
			}
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := c.Do(ctx, "SPUBLISH", channel, "hello")
		require.NoError(t, err)
		select {
		case m, ok := <-got:
			require.True(t, ok, "the subscription ended")
			require.Equal(t, "hello", m)
			return
		case <-time.After(200 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "no message reached the subscription")
	}
}
