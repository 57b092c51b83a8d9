package shard_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// With cluster-preferred-endpoint-type unknown-endpoint, a node's address
// is the host the client asked with the port from the reply. A refresh
// answered by a seed named by hostname ("localhost:port") while the
// nodes named by IP were marked down renames every node; CLUSTER NODES,
// which the client reads to tell a failed node from one that left, only
// shows IPs. The nodes' old names must retire (the same servers are in
// the new table, by node ID), not stay as failed nodes, each server then
// health-checked and listed in Stats twice.
func TestReview15UnknownEndpointHostChangeRetiresOldNames(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{NodeTimeout: time.Minute,
		Args: []string{"--cluster-preferred-endpoint-type", "unknown-endpoint"}})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	byIP := map[string]bool{}
	byName := map[string]bool{}
	for _, m := range ms {
		byIP[m.Addr] = true
		byName[net.JoinHostPort("localhost", strconv.Itoa(m.Port))] = true
	}
	cfg := shard.Config{
		Mode:  shard.ModeCluster,
		Seeds: []string{ms[0].Addr, net.JoinHostPort("localhost", strconv.Itoa(ms[1].Port))},
		Pool:  pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second},
		// Slow health checks: a node resumed stays marked down for a
		// while, so that a refresh asks the seeds first.
		Health: shard.HealthOptions{Interval: 3 * time.Second, FailureLimit: 1, Timeout: 300 * time.Millisecond},
	}
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)
	require.Equal(t, byIP, statsAddrs(c), "the first table names the nodes as the first seed does")

	renamed := false
	for attempt := 0; attempt < 5 && !renamed; attempt++ {
		for _, m := range ms {
			require.NoError(t, m.Pause())
		}
		waitFor(t, 60*time.Second, "every node marked down", func() bool {
			st := c.Stats()
			for _, n := range st.Nodes {
				if byIP[n.Node.Addr] && !n.Down {
					return false
				}
			}
			return true
		})
		// The first seed stays silent during the refresh: the second,
		// named by hostname, answers.
		require.NoError(t, ms[1].Resume())
		require.NoError(t, ms[2].Resume())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := c.Refresh(ctx)
		cancel()
		require.NoError(t, ms[0].Resume())
		require.NoError(t, err)
		renamed = strings.HasPrefix(c.Router().(*shard.ClusterRouter).Table().Master(0).Addr, "localhost:")
	}
	if !renamed {
		t.Skip("no refresh was answered by the seed named by hostname")
	}
	// Once the health checks ran again (every node answers), each server
	// is listed once, by the name the table gives it.
	waitFor(t, 60*time.Second, "every node up", func() bool {
		st := c.Stats()
		for _, n := range st.Nodes {
			if n.Down && byName[n.Node.Addr] {
				return false
			}
		}
		return true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, c.Refresh(ctx))
	for deadline := time.Now().Add(30 * time.Second); len(statsAddrs(c)) != 3 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, byName, statsAddrs(c), "each server once, by the name the table gives it")
}

func statsAddrs(c *shard.Client) map[string]bool {
	out := map[string]bool{}
	for _, n := range c.Stats().Nodes {
		out[n.Node.Addr] = true
	}
	return out
}
