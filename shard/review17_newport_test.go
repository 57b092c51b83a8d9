package shard_test

import (
	"context"
	"fmt"
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

// A cluster master that failed (killed, flagged fail by the others) and
// came back as the same node (its nodes.conf, hence its node ID) on
// another client port, with its cluster bus port or a new one: the client
// routes its slots to the new address and names the node by it in
// AllNodes, Stats and errors; the old address is no node of the client
// any more.
func TestReview17ClusterNodeBackOnNewPort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	t.Run("same bus port", func(t *testing.T) { nodeBackOnNewPort(t, true) })
	t.Run("new bus port", func(t *testing.T) { nodeBackOnNewPort(t, false) })
}

func nodeBackOnNewPort(t *testing.T, sameBus bool) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{NodeTimeout: time.Second})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	victim := ms[0]
	key, _ := keyOnMaster(t, rc, victim, "newport")
	id, err := redis.String(victim.Do("CLUSTER", "MYID"))
	require.NoError(t, err)

	cfg := clusterConfig(ms[1].Addr, ms[2].Addr)
	c := newClient(t, cfg)
	_, err = c.Do(ctx, "SET", key, "before")
	require.NoError(t, err)

	oldAddr := victim.Addr
	busPort := victim.Port + 10000 // the harness's cluster bus port
	conf, err := os.ReadFile(filepath.Join(victim.Dir, "nodes.conf"))
	require.NoError(t, err)
	require.NoError(t, victim.Kill())
	waitFor(t, 60*time.Second, "the other masters to flag the killed one fail", func() bool {
		for _, s := range ms[1:] {
			out, err := redis.String(s.Do("CLUSTER", "NODES"))
			if err != nil {
				return false
			}
			line := nodeLine(out, id)
			if !strings.Contains(line, ",fail") && !strings.Contains(line, " fail") {
				return false
			}
		}
		return true
	})
	// The client sees the node down under its old address.
	waitFor(t, 30*time.Second, "the client to mark the old address down", func() bool {
		for _, st := range c.Stats().Nodes {
			if st.Node.Addr == oldAddr {
				return st.Down
			}
		}
		return false
	})

	// The same node (its nodes.conf: its ID and its slots) on a new
	// client port, with the bus port it had.
	nodesFile := filepath.Join(t.TempDir(), "nodes.conf")
	require.NoError(t, os.WriteFile(nodesFile, conf, 0o600))
	args := []string{"--cluster-config-file", nodesFile}
	if sameBus {
		args = append(args, "--cluster-port", strconv.Itoa(busPort))
	}
	back := redistest.StartTB(t, redistest.Options{Cluster: true, NodeTimeout: time.Second, Args: args})
	require.NotEqual(t, oldAddr, back.Addr)
	gotID, err := redis.String(back.Do("CLUSTER", "MYID"))
	require.NoError(t, err)
	require.Equal(t, id, gotID, "the node came back with its ID")
	waitFor(t, 60*time.Second, "every master to list the node at its new address, healthy", func() bool {
		for _, s := range []*redistest.Server{ms[1], ms[2], back} {
			out, err := redis.String(s.Do("CLUSTER", "NODES"))
			if err != nil {
				return false
			}
			line := nodeLine(out, id)
			if !strings.Contains(line, " "+back.Addr+"@") || strings.Contains(line, "fail") {
				return false
			}
			info, err := redis.String(s.Do("CLUSTER", "INFO"))
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
		}
		return true
	})

	// The client follows: a write to the node's slot reaches it at its
	// new address.
	waitFor(t, 60*time.Second, "a write to the node's slot to succeed", func() bool {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := c.Do(cctx, "SET", key, "after")
		return err == nil
	})
	v, err := redis.String(back.Do("GET", key))
	require.NoError(t, err)
	require.Equal(t, "after", v)

	nodes := c.Router().(*shard.ClusterRouter).AllNodes()
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name+"="+n.Addr)
	}
	require.Contains(t, names, back.Addr+"="+back.Addr, "AllNodes names the node by its new address")
	for _, n := range nodes {
		require.NotEqual(t, oldAddr, n.Addr, "AllNodes still lists the old address: %v", names)
		require.NotEqual(t, oldAddr, n.Name, "AllNodes still names a node by the old address: %v", names)
	}
	waitFor(t, 30*time.Second, "Stats to list the new address, up, and not the old one", func() bool {
		newUp, old := false, false
		for _, st := range c.Stats().Nodes {
			if st.Node.Addr == oldAddr || st.Node.Name == oldAddr {
				old = true
			}
			if st.Node.Addr == back.Addr && st.Node.Name == back.Addr && !st.Down {
				newUp = true
			}
		}
		return newUp && !old
	})

	// An error from the node names its new address: pause it and time a
	// command out.
	require.NoError(t, back.Pause())
	defer func() { _ = back.Resume() }()
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = c.Do(cctx, "GET", key)
	cancel()
	require.Error(t, err)
	require.Contains(t, fmt.Sprint(err), back.Addr, "the error names the node's address")
	require.NotContains(t, fmt.Sprint(err), oldAddr, "the error names the old address")
	require.NoError(t, back.Resume())
}

// nodeLine returns the CLUSTER NODES line of the node with id.
func nodeLine(out, id string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, id+" ") {
			return l
		}
	}
	return ""
}

// readOnlyCommands returns the commands sent to the replica entry of addr.
func readOnlyCommands(c *shard.Client, addr string) int64 {
	for _, st := range c.Stats().Nodes {
		if st.Node.Addr == addr && st.ReadOnly {
			return st.Commands
		}
	}
	return 0
}
