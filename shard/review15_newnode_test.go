package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// A MOVED to a node the client's table does not list (it joined the
// cluster after the client read the topology) is followed at once, over
// TLS and logged in as the client's user, as any other node; a burst of
// commands on the slot costs a few topology reads, not one each.
func TestReview15MovedToANewNodeOverTLSWithACL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	const secret = "new-node-Secret"
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{
		TLS:   true,
		Users: []redistest.User{{Name: "app", Password: secret}},
	})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	reps := rc.Replicas()
	require.NotEmpty(t, reps)
	a, newbie := ms[0], reps[0]

	// The replica leaves the cluster: a hard reset (a new node ID, no
	// slots, no known nodes) and every other node forgets it.
	oldID := nodeID(t, newbie)
	_, err := newbie.Do("CLUSTER", "RESET", "HARD")
	require.NoError(t, err)
	var others []*redistest.Server
	for _, s := range rc.Nodes {
		if s != newbie {
			others = append(others, s)
		}
	}
	for _, s := range others {
		_, err := s.Do("CLUSTER", "FORGET", oldID)
		require.NoError(t, err)
	}

	cfg := clusterConfig(a.Addr)
	cfg.Pool.Username, cfg.Pool.Password = "app", secret
	cfg.Pool.TLSConfig = a.TLS.ClientConfig()
	cfg.Cluster.RefreshInterval = -1
	cfg.Health.Interval = -1
	c := newClient(t, cfg)
	for _, n := range c.Router().(*shard.ClusterRouter).AllNodes() {
		require.NotEqual(t, newbie.Addr, n.Addr, "the client read the topology without the node")
	}

	// The node joins again, under a new ID, and takes a slot of a.
	_, port, err := splitPort(a.Addr)
	require.NoError(t, err)
	_, err = newbie.Do("CLUSTER", "MEET", "127.0.0.1", port)
	require.NoError(t, err)
	newID := nodeID(t, newbie)
	waitFor(t, 30*time.Second, "every node to know the new node", func() bool {
		for _, s := range rc.Nodes {
			out, err := s.Do("CLUSTER", "NODES")
			if err != nil || !strings.Contains(out, newID) || strings.Contains(out, "handshake") {
				return false
			}
		}
		return true
	})
	key, slot := keyOnMaster(t, rc, a, "newnode")
	assignSlot(t, slot, a, newbie)
	waitFor(t, 30*time.Second, "every node to see the new owner", func() bool {
		for _, s := range rc.Nodes {
			out, err := s.Do("CLUSTER", "NODES")
			if err != nil {
				return false
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, newID) && !strings.Contains(line, " "+strconv.Itoa(slot)) {
					return false
				}
			}
		}
		return true
	})

	// A master that rejoins answers CLUSTERDOWN for a while (its rejoin
	// delay); the client then waits and reads the topology, rate
	// limited. Not what is tested here.
	waitFor(t, 30*time.Second, "the new node to serve", func() bool {
		out, err := newbie.Do("CLUSTER", "INFO")
		return err == nil && strings.Contains(out, "cluster_state:ok")
	})
	before := c.Stats().Refreshes
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 100
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = c.Do(ctx, "SET", fmt.Sprintf("%s:%d", key, i), i)
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "SET %d", i)
	}
	v, err := newbie.Do("GET", key+":7")
	require.NoError(t, err)
	require.Equal(t, "7", v, "the commands ran on the new node")
	got := c.Stats().Refreshes - before
	require.LessOrEqual(t, got, int64(5), "a burst of MOVEDs to one new node reads the topology a few times, not once each")
	v, err = redis.String(c.Do(ctx, "GET", key+":8"))
	require.NoError(t, err)
	require.Equal(t, "8", v)
}

func splitPort(addr string) (string, string, error) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", "", fmt.Errorf("no port in %q", addr)
	}
	return addr[:i], addr[i+1:], nil
}
