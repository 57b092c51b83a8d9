package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// failoverLog records the master changes c installs, as "from -> to",
// and returns a function that lists them so far.
func failoverLog(c *shard.Client) func() []string {
	var mu sync.Mutex
	var events []string
	shard.OnFailover(c, func(_, from, to string) {
		mu.Lock()
		events = append(events, from+" -> "+to)
		mu.Unlock()
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), events...)
	}
}

// queryingSentinelClient is a client of the one-shard set that asks the
// Sentinels at addrs every 50 ms; old and next are the shard's master and
// replica.
func queryingSentinelClient(t *testing.T, set *redistest.SentinelSet, addrs []string) (c *shard.Client, old, next *redistest.Server) {
	t.Helper()
	cfg := sentinelConfig(set)
	cfg.Sentinel.Addrs = addrs
	cfg.Sentinel.RefreshInterval = 50 * time.Millisecond
	cfg.Sentinel.MinRefreshInterval = 10 * time.Millisecond
	c = newClient(t, cfg)
	old, err := set.Master(0)
	require.NoError(t, err)
	next, err = set.Replica(0)
	require.NoError(t, err)
	return c, old, next
}

// TestSentinelQueryDoesNotUndoASwitch: a periodic query verifies the old
// master; before it installs it, a failover happens and the client
// installs the new master from the Sentinels' +switch-master. The query
// must not then install the master it found, which is the one just failed
// over from: writes would go back to it (lost if it is cut off and still
// answers as a master; refused with READONLY once it is a replica).
func TestSentinelQueryDoesNotUndoASwitch(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	c, old, next := queryingSentinelClient(t, set, set.Addrs())
	events := failoverLog(c)
	held := make(chan struct{})
	release := make(chan struct{})
	// after gets the changes installed so far when the query after the
	// held one has found its master (before that query installs it).
	after := make(chan []string, 1)
	var once sync.Once
	shard.OnSentinelQueryFound(c, 0, func(addr string) {
		first := false
		if addr == old.Addr {
			once.Do(func() { first = true })
		}
		if first {
			close(held)
			<-release
			return
		}
		select {
		case <-held:
		default:
			return
		}
		select {
		case <-release:
		default:
			return // a query of the switch's, while the held one waits
		}
		select {
		case after <- events():
		default:
		}
	})
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("no query found the old master")
	}

	_, err := set.Sentinels[0].Do("SENTINEL", "FAILOVER", set.Shards[0].Name)
	require.NoError(t, err)
	switched := old.Addr + " -> " + next.Addr
	waitFor(t, 60*time.Second, "the client to install the new master from +switch-master", func() bool {
		ev := events()
		return len(ev) == 1 && ev[0] == switched
	})
	close(release)
	// The held query ends, then the one the switch asked for runs.
	var got []string
	select {
	case got = <-after:
	case <-time.After(30 * time.Second):
		t.Fatal("no query ran after the held one")
	}
	require.Equal(t, []string{switched}, got, "master changes the client installed")
	require.Equal(t, next.Addr, c.Stats().Sentinel[0].Master)
	_, err = c.Do(context.Background(), "SET", "after-switch", "1")
	require.NoError(t, err, "a write after the switch")
}

// TestSentinelQueryDoesNotBringBackTheReplacedMaster: right after a
// failover, a Sentinel that has not heard of it yet names the old master,
// and the old master still says it is a master (it is cut off, or has not
// been made a replica yet). A query must not install it over the master
// that +switch-master announced while that one says it is the master:
// writes sent to the old one would be lost when it is made a replica.
// Here the one Sentinel the client asks is made to name the old master
// (REMOVE, then MONITOR it again), and the old master is made a master
// again, after the failover.
func TestSentinelQueryDoesNotBringBackTheReplacedMaster(t *testing.T) {
	f := failedOverBySoleSentinel(t)
	s0, name, c, old, next, events := f.s0, f.name, f.c, f.old, f.next, f.events
	// The Sentinel forgets the failover and names the old master, which
	// says it is a master.
	_, err := s0.Do("SENTINEL", "REMOVE", name)
	require.NoError(t, err)
	_, err = old.Do("REPLICAOF", "NO", "ONE")
	require.NoError(t, err)
	_, err = s0.Do("SENTINEL", "MONITOR", name, "127.0.0.1", fmt.Sprint(old.Port), "1")
	require.NoError(t, err)
	got, err := s0.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
	require.NoError(t, err)
	require.Contains(t, got, fmt.Sprint(old.Port), "the Sentinel names the old master")

	before := c.Stats().Sentinel[0].Queries
	waitFor(t, 5*time.Second, "three more queries", func() bool {
		return c.Stats().Sentinel[0].Queries >= before+3
	})
	require.Equal(t, []string{old.Addr + " -> " + next.Addr}, events(), "master changes the client installed")
	require.Equal(t, next.Addr, c.Stats().Sentinel[0].Master)
}
