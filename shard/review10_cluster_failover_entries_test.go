package shard_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// entriesOf returns the Stats entries of the server at addr.
func entriesOf(c *shard.Client, addr string) []shard.NodeStats {
	var out []shard.NodeStats
	for _, ns := range c.Stats().Nodes {
		if ns.Node.Addr == addr {
			out = append(out, ns)
		}
	}
	return out
}

// everyNodeSees reports whether every running node of rc shows the node
// at addr with flag (master, slave) in its CLUSTER NODES.
func everyNodeSees(rc *redistest.Cluster, addr, flag string) bool {
	for _, s := range rc.Nodes {
		text, err := s.Do("CLUSTER", "NODES")
		if err != nil {
			return false
		}
		found := false
		for _, line := range strings.Split(text, "\n") {
			f := strings.Fields(line)
			if len(f) > 2 && strings.HasPrefix(f[1], addr+"@") {
				found = slices.Contains(strings.Split(f[2], ","), flag)
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// After a failover (CLUSTER FAILOVER on a replica) the client kept, for
// each of the two servers that swapped roles, both the entry of the role
// it had and the one of the role it has now: Stats listed each twice,
// both were health-checked, and a kill of one of them fired NodeDown
// twice. Each server now has one entry, for its current role, and one
// kill fires one NodeDown.
func TestReview10ClusterFailoverOneEntryPerServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	var mu sync.Mutex
	var events []shard.NodeEvent
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}}
	c := newClient(t, cfg)
	m := rc.Masters()[0]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	_, slot := keyOnMaster(t, rc, m, "review10fo")

	waitFor(t, 15*time.Second, "the replica listed by the client", func() bool {
		_ = c.Refresh(ctx)
		e := entriesOf(c, rep.Addr)
		return len(e) == 1 && e[0].ReadOnly
	})
	failOverSlot(t, rc, rep, slot)
	waitFor(t, 30*time.Second, "every node to know the new roles", func() bool {
		return everyNodeSees(rc, rep.Addr, "master") && everyNodeSees(rc, m.Addr, "slave")
	})
	waitFor(t, 30*time.Second, "the client to see the swapped roles", func() bool {
		_ = c.Refresh(ctx)
		for _, e := range entriesOf(c, rep.Addr) {
			if !e.ReadOnly {
				for _, e := range entriesOf(c, m.Addr) {
					if e.ReadOnly {
						return true
					}
				}
			}
		}
		return false
	})
	for _, s := range []struct {
		addr     string
		readOnly bool
	}{{rep.Addr, false}, {m.Addr, true}} {
		e := entriesOf(c, s.addr)
		require.Len(t, e, 1, "Stats lists %s once, under its current role: %+v", s.addr, e)
		require.Equal(t, s.readOnly, e[0].ReadOnly, "%s", s.addr)
	}

	// The entry of the role a server left retired, but both servers stay:
	// no event says an address left (a metric kept per address stays).
	mu.Lock()
	var retired []shard.NodeEvent
	for _, ev := range events {
		if ev.Kind == shard.NodeRetired {
			retired = append(retired, ev)
		}
	}
	mu.Unlock()
	retiredOld := 0
	for _, ev := range retired {
		require.False(t, ev.AddressLeft, "%v: the server is still in the cluster", ev)
		if ev.Node.Addr == m.Addr {
			retiredOld++
		}
	}
	require.Equal(t, 1, retiredOld, "the old master's master entry retired once")

	// Kill the old master, a replica now: one NodeDown.
	require.NoError(t, m.Kill())
	downs := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, ev := range events {
			if ev.Kind == shard.NodeDown && ev.Node.Addr == m.Addr {
				n++
			}
		}
		return n
	}
	// Every entry Stats lists for the server is down, and each has told
	// of it.
	waitFor(t, 30*time.Second, "the killed server marked down", func() bool {
		e := entriesOf(c, m.Addr)
		if len(e) == 0 {
			return false
		}
		for _, ns := range e {
			if !ns.Down {
				return false
			}
		}
		return downs() >= len(e)
	})
	for _, ev := range events {
		t.Logf("event %v at %v", ev, ev.Time.Format("05.000"))
	}
	require.Equal(t, 1, downs(), "one kill, one NodeDown; Stats: %+v", entriesOf(c, m.Addr))
}
