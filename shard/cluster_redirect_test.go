package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keyOnMaster returns a key with the given tag prefix whose slot is owned
// by master m, and that slot (redistest.Cluster.KeyOn).
func keyOnMaster(t *testing.T, rc *redistest.Cluster, m *redistest.Server, prefix string) (string, int) {
	t.Helper()
	k, slot, err := rc.KeyOn(m, prefix)
	require.NoError(t, err)
	return k, slot
}

func setSlot(t *testing.T, s *redistest.Server, args ...string) {
	t.Helper()
	_, err := s.Do(append([]string{"CLUSTER", "SETSLOT"}, args...)...)
	require.NoError(t, err, "CLUSTER SETSLOT %v on %s", args, s.Addr)
}

// clusterAB returns the shared test cluster, a client on it with hooks
// (nil: none), and the cluster's first two masters.
func clusterAB(t *testing.T, hooks *shard.Hooks) (*redistest.Cluster, *shard.Client, *redistest.Server, *redistest.Server) {
	t.Helper()
	rc := clusterForTest(t)
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Hooks = hooks
	c := newClient(t, cfg)
	m := rc.Masters()
	return rc, c, m[0], m[1]
}

// assignSlot gives slot to master to, from master from, without moving its
// keys (IMPORTING, MIGRATING, then NODE on both): a client that knew the
// old owner meets MOVED.
func assignSlot(t *testing.T, slot int, from, to *redistest.Server) {
	t.Helper()
	fromID, toID := nodeID(t, from), nodeID(t, to)
	setSlot(t, to, fmt.Sprint(slot), "IMPORTING", fromID)
	setSlot(t, from, fmt.Sprint(slot), "MIGRATING", toID)
	setSlot(t, to, fmt.Sprint(slot), "NODE", toID)
	setSlot(t, from, fmt.Sprint(slot), "NODE", toID)
}

// migratingSlot marks slot as migrating from master from to master to
// (IMPORTING on to, MIGRATING on from) until the test ends, when it is
// made stable again on both: a key missing at from meets ASK, a command
// on keys split between them TRYAGAIN.
func migratingSlot(t *testing.T, slot int, from, to *redistest.Server) {
	t.Helper()
	setSlot(t, to, fmt.Sprint(slot), "IMPORTING", nodeID(t, from))
	setSlot(t, from, fmt.Sprint(slot), "MIGRATING", nodeID(t, to))
	t.Cleanup(func() {
		setSlot(t, from, fmt.Sprint(slot), "STABLE")
		setSlot(t, to, fmt.Sprint(slot), "STABLE")
	})
}

func stats(c *shard.Client) (moved, ask, tryAgain int64) {
	for _, st := range c.Stats().Nodes {
		moved += st.Moved
		ask += st.Ask
		tryAgain += st.TryAgain
	}
	return
}

func TestClusterFollowsMoved(t *testing.T) {
	ctx := context.Background()
	rc, c, a, b := clusterAB(t, nil)
	key, slot := keyOnMaster(t, rc, a, "moved")
	assignSlot(t, slot, a, b)
	defer func() {
		direct(t, b.Addr).Do("DEL", key)
		assignSlot(t, slot, b, a)
	}()

	_, err := c.Do(ctx, "SET", key, "v")
	require.NoError(t, err)
	moved, _, _ := stats(c)
	assert.Positive(t, moved)
	node, err := c.Router().Route(key)
	require.NoError(t, err)
	assert.Equal(t, b.Addr, node.Addr, "the slot was updated at once")
	v, err := redis.String(direct(t, b.Addr).Do("GET", key))
	require.NoError(t, err)
	assert.Equal(t, "v", v)
}

func TestClusterAskInsideAPipeline(t *testing.T) {
	ctx := context.Background()
	rc, c, a, b := clusterAB(t, nil)
	key, slot := keyOnMaster(t, rc, a, "ask")
	migratingSlot(t, slot, a, b)
	// key is missing on the source, so the source answers ASK; the target
	// serves it after ASKING. The other commands are not disturbed.
	p := c.Pipeline()
	p.Send("SET", "ask:other1", "1")
	p.Send("GET", key+"missing")
	p.Send("SET", "ask:other2", "2")
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.NoError(t, res[1].Err)
	assert.Nil(t, res[1].Reply)
	require.NoError(t, res[2].Err)
	_, ask, _ := stats(c)
	assert.Positive(t, ask)
	// ASK does not change the table.
	node, _ := c.Router().Route(key)
	assert.Equal(t, a.Addr, node.Addr)
}

func TestClusterRedirectLoopEndsWithTypedError(t *testing.T) {
	ctx := context.Background()
	rc, c, a, b := clusterAB(t, nil)
	key, slot := keyOnMaster(t, rc, a, "loop")
	// a sends missing keys to b (ASK), b is not importing and sends them back (MOVED).
	setSlot(t, a, fmt.Sprint(slot), "MIGRATING", nodeID(t, b))
	defer setSlot(t, a, fmt.Sprint(slot), "STABLE")

	start := time.Now()
	_, err := c.Do(ctx, "GET", key)
	require.Error(t, err)
	var re *shard.RetryError
	require.ErrorAs(t, err, &re)
	assert.ErrorIs(t, err, shard.ErrRetryBudget)
	assert.Contains(t, re.Last, "MOVED")
	assert.LessOrEqual(t, re.Attempts, 6)
	assert.Less(t, time.Since(start), 2*time.Second)
}

func TestClusterTryAgainEndsWithinTheRetryWait(t *testing.T) {
	ctx := context.Background()
	rc := clusterForTest(t)
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.MaxRetryWait = 300 * time.Millisecond
	c := newClient(t, cfg)
	m := rc.Masters()
	a, b := m[0], m[1]
	key, slot := keyOnMaster(t, rc, a, "tryagain")
	_, err := c.Do(ctx, "SET", key+"1", "x")
	require.NoError(t, err)
	t.Cleanup(func() { c.Do(ctx, "DEL", key+"1") }) // once the slot is stable again
	migratingSlot(t, slot, a, b)
	// One key exists on the source, one does not: the source keeps answering TRYAGAIN.
	start := time.Now()
	_, err = c.Do(ctx, "MGET", key+"1", key+"2")
	var re *shard.RetryError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Last, "TRYAGAIN")
	assert.Less(t, time.Since(start), time.Second)
	_, _, tryAgain := stats(c)
	assert.Positive(t, tryAgain)

	// A context deadline ends it too.
	cfg.Cluster.MaxRetryWait = time.Minute
	c2 := newClient(t, cfg)
	dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = c2.Do(dctx, "MGET", key+"1", key+"2")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), time.Second)
}

// emptySlotKeyOnMaster is keyOnMaster for a key whose slot holds no key
// yet at m: the shared test cluster keeps other tests' keys, and a slot
// that holds some cannot be given to another master, nor counted empty.
func emptySlotKeyOnMaster(t *testing.T, rc *redistest.Cluster, m *redistest.Server, prefix string) (string, int) {
	t.Helper()
	for i := range 1000 {
		k, slot := keyOnMaster(t, rc, m, fmt.Sprintf("%s%d", prefix, i))
		n, err := m.Do("CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(slot))
		require.NoError(t, err)
		if n == "0" {
			return k, slot
		}
	}
	t.Fatalf("no empty slot at %s for prefix %q", m.Addr, prefix)
	return "", 0
}
