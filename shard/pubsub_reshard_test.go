package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moveSlot moves slot (with its keys, if any) from one master to another
// the way redis-cli --cluster reshard does, telling every master of all
// the new owner (redistest.MoveSlot).
func moveSlot(t *testing.T, slot int, from, to *redistest.Server, all []*redistest.Server) {
	t.Helper()
	_, err := redistest.MoveSlot(context.Background(), slot, from, to, all, redistest.SlotMoveOptions{})
	require.NoError(t, err)
}

// TestSSubscribeFollowsLiveResharding moves the slots of 100 subscribed
// shard channels, one by one, to another master while messages are
// published: after each move the subscription is at the new owner on its
// own, and nothing published after the move is lost.
func TestSSubscribeFollowsLiveResharding(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and moves 100 slots")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	c := newClient(t, clusterConfig(rc.Seeds()...))
	ctx := context.Background()
	masters := rc.Masters()
	require.Len(t, masters, 3)
	from, to := masters[0], masters[1]

	// 100 channels in 100 different slots of the first master.
	var names []string
	slots := map[int]bool{}
	for i := 0; len(names) < 100; i++ {
		name := fmt.Sprintf("moving:%d", i)
		slot := cluster.Slot(name)
		if slots[slot] || slot > 5000 { // the first master owns 0-5460
			continue
		}
		slots[slot] = true
		names = append(names, name)
	}
	sub, err := c.SSubscribe(ctx, names...)
	require.NoError(t, err)
	defer sub.Close()

	var gaps []time.Duration
	for i, name := range names {
		slot := cluster.Slot(name)
		moveSlot(t, slot, from, to, masters)
		moved := time.Now()
		// Published straight at the new owner: the subscription must get
		// there without any SPUBLISH through the client showing it the way.
		for {
			n, err := redis.Int(redistestDo(to, "SPUBLISH", name, "probe"))
			require.NoError(t, err)
			if n == 1 {
				break
			}
			require.Less(t, time.Since(moved), 10*time.Second, "%s never followed slot %d", name, slot)
			time.Sleep(2 * time.Millisecond)
		}
		gaps = append(gaps, time.Since(moved))
		// And through the client, which may first meet MOVED.
		n, err := redis.Int(c.Do(ctx, "SPUBLISH", name, strconv.Itoa(i)))
		require.NoError(t, err)
		require.Equal(t, 1, n)
	}
	var worst, total time.Duration
	for _, g := range gaps {
		worst = max(worst, g)
		total += g
	}
	t.Logf("100 slots moved: the subscription followed each within %v (mean %v)", worst.Round(time.Millisecond), (total / time.Duration(len(gaps))).Round(time.Millisecond))

	// Every message published after its slot moved arrived, in order.
	got := map[string][]string{}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for n := 0; n < 2*len(names); {
		v, err := sub.Receive(rctx)
		require.NoError(t, err, "after %d messages", n)
		if m, ok := v.(redis.Message); ok {
			got[m.Channel] = append(got[m.Channel], string(m.Data))
			n++
		}
	}
	for i, name := range names {
		assert.Equal(t, []string{"probe", strconv.Itoa(i)}, got[name], name)
	}
	st := sub.Stats()
	assert.GreaterOrEqual(t, st.Moved, int64(100), "every channel moved")
	assert.Zero(t, st.Dropped)
	assert.Equal(t, 1, st.Connections, "the connection to the old owner, left without channels, is closed")
	for _, name := range names[:10] {
		assert.Equal(t, 1, numSub(t, to, "SHARDNUMSUB", name))
		assert.Equal(t, 0, numSub(t, from, "SHARDNUMSUB", name))
	}
}

// redistestDo runs one command on s and returns its reply as redigo would.
func redistestDo(s *redistest.Server, args ...any) (any, error) {
	conn, err := redis.Dial("tcp", s.Addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.Do(args[0].(string), args[1:]...)
}
