package shard_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/require"
)

// A cluster of one node set to cluster-preferred-endpoint-type hostname
// without cluster-announce-hostname lists itself with the endpoint "?"
// and an empty ip (it never met another node, so it does not know its
// own IP). The client reaches it at the address it was given, an IP or
// a hostname, and keeps it there across refreshes.
func TestReview15HostnamePreferredWithoutHostnameOneNodeClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own server")
	}
	s := redistest.StartTB(t, redistest.Options{Cluster: true})
	_, err := s.Do("CLUSTER", "ADDSLOTSRANGE", "0", "16383")
	require.NoError(t, err)
	_, err = s.Do("CONFIG", "SET", "cluster-preferred-endpoint-type", "hostname")
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "cluster_state:ok", func() bool {
		info, err := s.Do("CLUSTER", "INFO")
		return err == nil && strings.Contains(info, "cluster_state:ok")
	})
	shards, err := s.Do("CLUSTER", "SHARDS")
	require.NoError(t, err)
	require.Contains(t, shards, "\nip\n\nendpoint\n?\n", "the node lists itself with endpoint ? and an empty ip")

	for _, seed := range []string{s.Addr, net.JoinHostPort("localhost", strconv.Itoa(s.Port))} {
		cfg := clusterConfig(seed)
		cfg.Cluster.RefreshInterval = -1
		c := newClient(t, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := c.Do(ctx, "SET", "no-hostname", seed)
		require.NoError(t, err)
		require.NoError(t, c.Refresh(ctx))
		v, err := c.Do(ctx, "GET", "no-hostname")
		cancel()
		require.NoError(t, err)
		require.Equal(t, seed, string(v.([]byte)))
		require.Equal(t, map[string]bool{seed: true}, statsAddrs(c), "seed %s", seed)
		require.NoError(t, c.Close())
	}
}
