package shard_test

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A cluster client built with Config.Migration routes its commands by
// the old cluster while it waits. A slot moved there: the GET sent to the
// old owner met a MOVED, which was written into the client's own (new)
// cluster table, pointing a slot of the new cluster at a node of the old
// one until a refresh, while the old table, never corrected, kept sending
// every later command on the slot to the old owner, each paying a MOVED
// hop.
func TestReview11OldClusterMovedGoesToTheOldTable(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	oldCluster := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	oldAddrs := masterAddrs(oldCluster)
	var (
		mu      sync.Mutex
		strayed []string // slot map changes of the client's own table that name an old-cluster node
	)
	record := func(ev shard.SlotMapEvent) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range ev.Moves {
			if oldAddrs[m.To.Addr] {
				strayed = append(strayed, ev.String())
			}
		}
		for _, n := range ev.Added {
			if oldAddrs[n.Addr] {
				strayed = append(strayed, ev.String())
			}
		}
	}
	c, from := waitingOn(t, oldCluster, func(_, to *shard.Config) { to.Hooks = &shard.Hooks{SlotMap: record} })
	plain := newClient(t, from) // a process still on the old cluster
	own := ownRouter(t, c)

	key := "r11oldmovedcmd:{" + strconv.FormatUint(rand.Uint64(), 36) + "}"
	_, err := c.Do(ctx, "SET", key, "v1")
	require.NoError(t, err)
	got, err := redis.String(plain.Do(ctx, "GET", key))
	require.NoError(t, err)
	require.Equal(t, "v1", got, "the key is written on the old cluster while waiting")

	owner, dst := routedOwner(t, oldCluster, plain, key)
	_, err = redistest.MoveSlot(ctx, cluster.Slot(key), owner, dst, oldCluster.Masters(), redistest.SlotMoveOptions{})
	require.NoError(t, err)

	movedAt := func() int64 {
		var n int64
		for _, ns := range c.Stats().Nodes {
			if oldAddrs[ns.Node.Addr] {
				n += ns.Moved
			}
		}
		return n
	}
	before := movedAt()
	const gets = 20
	for i := 0; i < gets; i++ {
		got, err := redis.String(c.Do(ctx, "GET", key))
		require.NoError(t, err)
		require.Equal(t, "v1", got)
	}
	hops := movedAt() - before
	t.Logf("MOVED from the old cluster over %d GETs: %d", gets, hops)
	assert.Equal(t, int64(1), hops, "the old table follows the first MOVED; later GETs go to the slot's new owner at once")

	nd, err := own.Route(key)
	require.NoError(t, err)
	assert.False(t, oldAddrs[nd.Addr], "the client's own table routes %q to %s, a node of the old cluster", key, nd.Addr)
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, strayed, "the client's own slot map took a node of the old cluster")
}

// The same, when the old cluster's nodes announce no hostname and their
// MOVED names no address ("?"): only the old cluster's topology can say
// where the slot went. The command was routed again by the client's own
// (new) table, which knows nothing of the old cluster's slots.
func TestReview11OldClusterMovedWithoutAddress(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	oldCluster := startNoHostnameCluster(t)
	c, from := waitingOn(t, oldCluster, nil)
	plain := newClient(t, from) // a process still on the old cluster

	key := "r11oldmovedq:{" + strconv.FormatUint(rand.Uint64(), 36) + "}"
	_, err := c.Do(ctx, "SET", key, "v1")
	require.NoError(t, err)
	got, err := redis.String(plain.Do(ctx, "GET", key))
	require.NoError(t, err)
	require.Equal(t, "v1", got, "the key is written on the old cluster while waiting")
	owner, dst := routedOwner(t, oldCluster, plain, key)
	_, err = redistest.MoveSlot(ctx, cluster.Slot(key), owner, dst, oldCluster.Masters(), redistest.SlotMoveOptions{})
	require.NoError(t, err)

	got, err = redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err, "GET on the old cluster after its slot moved")
	assert.Equal(t, "v1", got, "the GET reads the old cluster, where the key is while the client waits")
	_, err = c.Do(ctx, "SET", key, "v2")
	require.NoError(t, err)
	got, err = redis.String(dst.Do("GET", key))
	require.NoError(t, err)
	assert.Equal(t, "v2", got, "the SET lands at the slot's new owner on the old cluster")
}

// A command routed by the old cluster while the client waits, whose node
// there refuses connections, is retried within MaxRetryWait. Routed
// again, it was sent by the client's own (new) cluster table, at the
// master of a slot numbered as the old node's index: a GET answered nil
// and a SET was written on the new cluster, while the key was on the old
// one and the other processes still read there.
func TestReview11OldClusterRetryStaysOnTheOldCluster(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	oldCluster := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	c, from := waitingOn(t, oldCluster, func(_, to *shard.Config) { to.Cluster.MaxRetryWait = time.Second })
	plain := newClient(t, from)

	key := "r11oldretry:{" + strconv.FormatUint(rand.Uint64(), 36) + "}"
	onNew := sharedClusterClient(t, key)
	_, err := c.Do(ctx, "SET", key, "v1")
	require.NoError(t, err)
	owner, _ := routedOwner(t, oldCluster, plain, key)
	require.NoError(t, owner.Stop())

	v, err := c.Do(ctx, "GET", key)
	assert.Error(t, err, "GET while the key's old owner is down; answered %v", v)
	_, err = c.Do(ctx, "SET", key, "v2")
	assert.Error(t, err, "SET while the key's old owner is down")
	n, err := redis.Int(onNew.Do(ctx, "EXISTS", key))
	require.NoError(t, err)
	assert.Equal(t, 0, n, "the key was written on the new cluster while the client waits")
}

// A shard channel subscribed on the old cluster while the client waits,
// whose slot moved there, between nodes that announce no hostname: the
// MOVED names no address ("?"), and only the old cluster's topology says
// where the slot went. The refresh it asked for read the client's own
// cluster, the old table was never corrected, and the channel was sent
// to the old owner again every 50 ms, never delivering until the switch.
func TestReview11OldClusterSubscriptionMovedWithoutAddress(t *testing.T) {
	ctx := oldClusterContext(t, 90*time.Second)
	oldCluster := startNoHostnameCluster(t)
	c, from := waitingOn(t, oldCluster, nil)
	plain := newClient(t, from)

	sch := "r11oldmovedqsub:{" + strconv.FormatUint(rand.Uint64(), 36) + "}"
	owner, dst := routedOwner(t, oldCluster, plain, sch)
	sub := subscribedOnOld(ctx, t, c, sch, owner)
	_, err := redistest.MoveSlot(ctx, cluster.Slot(sch), owner, dst, oldCluster.Masters(), redistest.SlotMoveOptions{})
	require.NoError(t, err)
	_, err = owner.Do("SPUBLISH", sch, "x")
	require.Error(t, err)
	require.Contains(t, err.Error(), "?:", "the old owner's redirect names no host")

	waitFor(t, 10*time.Second, "the shard channel at the slot's new owner on the old cluster", func() bool {
		return numSub(t, dst, "SHARDNUMSUB", sch) == 1
	})
	n, err := redis.Int(plain.Do(ctx, "SPUBLISH", sch, "after"))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	m, err := nextMessage(sub, 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "after", string(m.Data))
}
