package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// setOwners gives each slot of slots to master to, taking it from master
// from, in one pipeline per node (IMPORTING then NODE on to, which bumps
// its epoch; NODE on from). The slots must hold no keys.
func setOwners(t *testing.T, slots []int, from, to *redistest.Server, fromID, toID string) {
	t.Helper()
	pipeline := func(s *redistest.Server, args [][]any) {
		c, err := redis.Dial("tcp", s.Addr)
		require.NoError(t, err)
		defer c.Close()
		for _, a := range args {
			require.NoError(t, c.Send("CLUSTER", a...))
		}
		require.NoError(t, c.Flush())
		for range args {
			_, err := c.Receive()
			require.NoError(t, err)
		}
	}
	var onTo, onFrom [][]any
	for _, s := range slots {
		onTo = append(onTo, []any{"SETSLOT", s, "IMPORTING", fromID}, []any{"SETSLOT", s, "NODE", toID})
		onFrom = append(onFrom, []any{"SETSLOT", s, "NODE", toID})
	}
	pipeline(to, onTo)
	pipeline(from, onFrom)
}

// A master whose slots are split into a thousand single-slot ranges,
// then a master left with no slot at all (cluster-allow-replica-migration
// no keeps it a master, with its replica): the client routes every slot
// to its owner after a refresh, with no redirect for the split slots, and
// never to the empty master.
func TestReview15SplitRangesAndEmptyMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	a, b, cm := ms[0], ms[1], ms[2]
	ids := map[*redistest.Server]string{a: nodeID(t, a), b: nodeID(t, b), cm: nodeID(t, cm)}
	for _, s := range ms {
		_, err := s.Do("CONFIG", "SET", "cluster-allow-replica-migration", "no")
		require.NoError(t, err)
	}
	// The model of who owns what, independent of the client: the
	// cluster was made with 0-5460, 5461-10922 and 10923-16383.
	owner := make([]*redistest.Server, 16384)
	for s := range owner {
		switch {
		case s <= 5460:
			owner[s] = a
		case s <= 10922:
			owner[s] = b
		default:
			owner[s] = cm
		}
	}

	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var odd []int
	for s := 1; s < 2000; s += 2 {
		odd = append(odd, s)
		owner[s] = b
	}
	setOwners(t, odd, a, b, ids[a], ids[b])
	require.NoError(t, rc.WaitHealthy(ctx))
	require.NoError(t, c.Refresh(ctx))
	checkOwners(t, c, owner)
	moved0, ask0, _ := stats(c)
	keys := writeKeys(t, ctx, c, "split", 400)
	checkKeysAt(t, keys, owner, a)
	moved, ask, _ := stats(c)
	require.Equal(t, moved0, moved, "no MOVED after a refresh")
	require.Equal(t, ask0, ask)
	flush(t, ms)

	// a loses every slot it has left, to cm.
	var rest []int
	for s, o := range owner {
		if o == a {
			rest = append(rest, s)
			owner[s] = cm
		}
	}
	setOwners(t, rest, a, cm, ids[a], ids[cm])
	require.NoError(t, rc.WaitHealthy(ctx))
	role, err := a.Do("ROLE")
	require.NoError(t, err)
	require.Contains(t, role, "master", "a stays a master, with no slots")
	// The client still has the old table: the MOVEDs lead it.
	keys = writeKeys(t, ctx, c, "emptied", 400)
	checkKeysAt(t, keys, owner, a)
	require.NoError(t, c.Refresh(ctx))
	checkOwners(t, c, owner)
	moved0, _, _ = stats(c)
	keys = writeKeys(t, ctx, c, "after", 400)
	checkKeysAt(t, keys, owner, a)
	moved, _, _ = stats(c)
	require.Equal(t, moved0, moved, "no MOVED after a refresh")
}

func flush(t *testing.T, ms []*redistest.Server) {
	t.Helper()
	for _, s := range ms {
		_, err := s.Do("FLUSHALL")
		require.NoError(t, err)
	}
}

func writeKeys(t *testing.T, ctx context.Context, c *shard.Client, prefix string, n int) []string {
	t.Helper()
	var keys []string
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("%s:%d", prefix, i)
		_, err := c.Do(ctx, "SET", k, i)
		require.NoError(t, err, "SET %s", k)
		keys = append(keys, k)
	}
	return keys
}

// checkKeysAt checks, with the server's CLUSTER KEYSLOT and a GET on the
// model's owner, that each key was written where the model says.
func checkKeysAt(t *testing.T, keys []string, owner []*redistest.Server, empty *redistest.Server) {
	t.Helper()
	for _, k := range keys {
		out, err := empty.Do("CLUSTER", "KEYSLOT", k)
		require.NoError(t, err)
		var slot int
		_, err = fmt.Sscan(out, &slot)
		require.NoError(t, err)
		v, err := owner[slot].Do("GET", k)
		require.NoError(t, err, "key %s of slot %d is at %s", k, slot, owner[slot].Addr)
		require.NotEmpty(t, v)
	}
}

// checkOwners checks the client's table against the model, slot by slot.
func checkOwners(t *testing.T, c *shard.Client, owner []*redistest.Server) {
	t.Helper()
	tab := c.Router().(*shard.ClusterRouter).Table()
	for s, o := range owner {
		if got := tab.Master(s).Addr; got != o.Addr {
			t.Fatalf("slot %d: the table says %s, the cluster %s", s, got, o.Addr)
		}
	}
}
