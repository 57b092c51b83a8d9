package shard_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A master whose replica took over while it was down comes back, as the
// same node, on another client port and rejoins as a replica. Nothing
// the client sends reaches it (a replica; reads of its slot keep going
// to the master while no replica is known), and its old address never
// answers a health check: with the default RefreshInterval (60 s) the
// client must still learn of it soon, from the nodes that are up, while
// it keeps a node marked down.
func TestReview17FailedNodeBackOnNewPortWithoutPeriodicRefresh(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	victim := ms[0]
	replica, err := rc.ReplicaOf(victim)
	require.NoError(t, err)
	key, _ := keyOnMaster(t, rc, victim, "failedrefresh")
	id, err := redis.String(victim.Do("CLUSTER", "MYID"))
	require.NoError(t, err)

	cfg := clusterConfig(ms[1].Addr, ms[2].Addr)
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	cfg.Cluster.RefreshInterval = 0 // the default: 60 s
	c := newClient(t, cfg)
	_, err = c.Do(ctx, "SET", key, "v1")
	require.NoError(t, err)

	oldAddr := victim.Addr
	busPort := victim.Port + 10000 // the harness's cluster bus port
	conf, err := os.ReadFile(filepath.Join(victim.Dir, "nodes.conf"))
	require.NoError(t, err)
	require.NoError(t, victim.Kill())
	waitFor(t, 60*time.Second, "the replica to take over", func() bool {
		info, err := replica.Do("INFO", "replication")
		return err == nil && strings.Contains(info, "role:master")
	})
	waitFor(t, 60*time.Second, "a write to the slot to succeed on the new master", func() bool {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := c.Do(cctx, "SET", key, "v2")
		return err == nil
	})
	waitFor(t, 30*time.Second, "the client to list the old address down (a failed node)", func() bool {
		for _, st := range c.Stats().Nodes {
			if st.Node.Addr == oldAddr {
				return st.Down
			}
		}
		return false
	})

	nodesFile := filepath.Join(t.TempDir(), "nodes.conf")
	require.NoError(t, os.WriteFile(nodesFile, conf, 0o600))
	back := redistest.StartTB(t, redistest.Options{Cluster: true, NodeTimeout: time.Second,
		Args: []string{"--cluster-config-file", nodesFile, "--cluster-port", strconv.Itoa(busPort)}})
	require.NotEqual(t, oldAddr, back.Addr)
	waitFor(t, 60*time.Second, "the node to rejoin as a replica at its new address, in sync", func() bool {
		for _, s := range []*redistest.Server{ms[1], ms[2], replica} {
			out, err := redis.String(s.Do("CLUSTER", "NODES"))
			if err != nil {
				return false
			}
			line := nodeLine(out, id)
			if !strings.Contains(line, " "+back.Addr+"@") || strings.Contains(line, "fail") || !strings.Contains(line, "slave") {
				return false
			}
		}
		info, err := back.Do("INFO", "replication")
		return err == nil && strings.Contains(info, "master_link_status:up")
	})

	// Well within the 60 s of the periodic refresh.
	waitFor(t, 15*time.Second, "the client to list the node at its new address only, up", func() bool {
		newUp, old := false, false
		for _, st := range c.Stats().Nodes {
			if st.Node.Addr == oldAddr || strings.Contains(st.Node.Name, oldAddr) {
				old = true
			}
			if st.Node.Addr == back.Addr && st.ReadOnly && !st.Down {
				newUp = true
			}
		}
		return newUp && !old
	})
	for _, n := range c.Router().(*shard.ClusterRouter).AllNodes() {
		require.NotEqual(t, oldAddr, n.Addr)
		require.NotContains(t, n.Name, oldAddr)
	}
	// Reads of the slot go to its only replica, at its new address.
	before := readOnlyCommands(c, back.Addr)
	for i := 0; i < 20; i++ {
		v, err := redis.String(c.Do(ctx, "GET", key))
		require.NoError(t, err)
		require.Equal(t, "v2", v)
	}
	require.Greater(t, readOnlyCommands(c, back.Addr), before, "reads reached the replica at its new address")
}
