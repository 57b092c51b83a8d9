package shard_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A cluster whose nodes take both TLS (tls-port, tls-cluster yes) and
// plain connections (port): CLUSTER SHARDS lists both ports of every
// node. A client configured for TLS dials every node on its TLS port,
// one without TLS on its plain port, and both follow a MOVED, which
// the server writes with the port that matches the connection.
func TestReview15ClusterTLSAndPlainPorts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{TLS: true})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	tlsAddrs, plainAddrs := map[string]bool{}, map[string]bool{}
	var plainSeeds []string
	for _, s := range ms {
		p, err := redistest.FreePort()
		require.NoError(t, err)
		_, err = s.Do("CONFIG", "SET", "port", strconv.Itoa(p))
		require.NoError(t, err)
		// A node learns its own new plain port only at start (7.0
		// reports it to the others, not in its own replies, after
		// CONFIG SET): keep it in the configuration and restart.
		_, err = s.Do("CONFIG", "REWRITE")
		require.NoError(t, err)
		require.NoError(t, s.Restart())
		a := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
		plainAddrs[a] = true
		plainSeeds = append(plainSeeds, a)
		tlsAddrs[s.Addr] = true
	}
	// A master that restarts refuses writes (CLUSTERDOWN) for a moment.
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	require.NoError(t, rc.WaitHealthy(wctx))
	waitFor(t, 30*time.Second, "every node to list both ports of every node", func() bool {
		for _, s := range ms {
			out, err := s.Do("CLUSTER", "SHARDS")
			if err != nil {
				return false
			}
			for a := range plainAddrs {
				_, p, _ := net.SplitHostPort(a)
				if !strings.Contains(out, "\nport\n"+p+"\n") {
					return false
				}
			}
			for _, o := range ms {
				if !strings.Contains(out, "\ntls-port\n"+strconv.Itoa(o.Port)+"\n") {
					return false
				}
			}
		}
		return true
	})

	check := func(t *testing.T, c *shard.Client, want map[string]bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		nodes := c.Router().(*shard.ClusterRouter).AllNodes()
		require.Len(t, nodes, 3)
		for _, n := range nodes {
			require.True(t, want[n.Addr], "node %s is dialed on the port that matches the client: %v", n.Addr, want)
		}
		for i := 0; i < 30; i++ {
			_, err := c.Do(ctx, "SET", fmt.Sprintf("tlsports:%d", i), i)
			require.NoError(t, err)
		}
		key, slot := keyOnMaster(t, rc, ms[0], "tlsports-moved")
		assignSlot(t, slot, ms[0], ms[1])
		defer assignSlot(t, slot, ms[1], ms[0])
		_, err := c.Do(ctx, "SET", key, "v")
		require.NoError(t, err)
		v, err := redis.String(ms[1].Do("GET", key))
		require.NoError(t, err)
		require.Equal(t, "v", v)
		_, err = ms[1].Do("DEL", key)
		require.NoError(t, err)
		moved, _, _ := stats(c)
		require.NotZero(t, moved)
		for _, st := range c.Stats().Nodes {
			require.True(t, want[st.Node.Addr], "%s is a node the client dialed", st.Node.Addr)
		}
	}

	t.Run("tls", func(t *testing.T) {
		cfg := clusterConfig(rc.Seeds()...)
		cfg.Pool.TLSConfig = ms[0].TLS.ClientConfig()
		cfg.Cluster.RefreshInterval = -1
		check(t, newClient(t, cfg), tlsAddrs)
	})
	t.Run("plain", func(t *testing.T) {
		cfg := clusterConfig(plainSeeds...)
		cfg.Cluster.RefreshInterval = -1
		check(t, newClient(t, cfg), plainAddrs)
	})
}
