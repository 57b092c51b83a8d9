package shard_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sunsubFixture is a cluster of its own (the tests move a slot), a client
// that does not refresh its slot table by itself, and shard channels on
// the first master: movedA, movedB and later (not subscribed at first) in
// slot moving, which the test moves to the second master; stay in
// another slot that does not move, left behind by the same unsubscribe;
// keep in a third slot, subscribed throughout.
type sunsubFixture struct {
	rc                    *redistest.Cluster
	c                     *shard.Client
	from, to              *redistest.Server
	masters               []*redistest.Server
	moving                int
	movedA, movedB, later string
	stay, keep            string
	sub                   *shard.Subscription
}

func newSunsubFixture(t *testing.T) *sunsubFixture {
	t.Helper()
	return newSunsubFixtureOf(t, redistest.Options{})
}

// newSunsubFixtureOf is newSunsubFixture with the nodes' options.
func newSunsubFixtureOf(t *testing.T, opts redistest.Options) *sunsubFixture {
	t.Helper()
	rc := redistest.StartClusterTB(t, 3, 0, opts)
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	f := &sunsubFixture{rc: rc, c: newClient(t, cfg), masters: rc.Masters()}
	require.Len(t, f.masters, 3)
	f.from, f.to = f.masters[0], f.masters[1]

	// Three hash tags whose slots the first master owns.
	var tags []string
	slots := map[int]bool{}
	for i := 0; len(tags) < 3; i++ {
		tag := fmt.Sprintf("sunsub%d", i)
		slot := cluster.Slot(tag)
		owner, err := rc.MasterOfSlot(slot)
		require.NoError(t, err)
		if owner.Addr != f.from.Addr || slots[slot] {
			continue
		}
		slots[slot] = true
		tags = append(tags, tag)
	}
	f.moving = cluster.Slot(tags[0])
	f.movedA, f.movedB, f.later = "{"+tags[0]+"}a", "{"+tags[0]+"}b", "{"+tags[0]+"}later"
	f.stay, f.keep = "{"+tags[1]+"}stay", "{"+tags[2]+"}keep"

	sub, err := f.c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { sub.Close() })
	f.sub = sub
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, sub.SSubscribe(ctx, f.movedA, f.movedB, f.stay, f.keep))
	f.expect(t, "ssubscribe "+f.movedA, "ssubscribe "+f.movedB, "ssubscribe "+f.stay, "ssubscribe "+f.keep)
	return f
}

// expect receives until each of want ("kind channel" for a confirmation,
// "pong data" for a pong) has arrived once. Anything else fails the
// test: an error (a MOVED that reached the application, a connection
// reported lost), a message, a confirmation twice or one not asked for.
func (f *sunsubFixture) expect(t *testing.T, want ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	left := map[string]bool{}
	for _, w := range want {
		left[w] = true
	}
	for len(left) > 0 {
		v, err := f.sub.Receive(ctx)
		require.NoError(t, err, "still waiting for %v", left)
		var got string
		switch m := v.(type) {
		case redis.Subscription:
			got = m.Kind + " " + m.Channel
		case redis.Pong:
			got = "pong " + m.Data
		default:
			got = fmt.Sprintf("%T %v", v, v)
		}
		require.True(t, left[got], "received %q while waiting for %v", got, left)
		delete(left, got)
	}
}

// checkAfter asserts what the subscription delivers once the dust has
// settled: the connections' replies are in line again (a PING is answered
// by its pong, nothing else comes first), the unsubscribed channels are
// subscribed nowhere, keep and later deliver, and no connection was
// taken for failed.
func (f *sunsubFixture) checkAfter(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, f.sub.Ping(ctx, "again"))
	for { // one pong per connection: the first ends the wait, the other may follow
		v, err := f.sub.Receive(ctx)
		require.NoError(t, err)
		p, ok := v.(redis.Pong)
		require.True(t, ok, "received %#v, want a pong", v)
		if p.Data == "again" {
			break
		}
		require.Equal(t, "after", p.Data, "the second connection's pong of the earlier PING")
	}

	for _, ch := range []string{f.keep, f.later} {
		n, err := redis.Int(f.c.Do(ctx, "SPUBLISH", ch, "to "+ch))
		require.NoError(t, err)
		require.Equal(t, 1, n, "subscribers of %s", ch)
	}
	got := map[string]string{}
	for len(got) < 2 {
		v, err := f.sub.Receive(ctx)
		require.NoError(t, err)
		switch m := v.(type) {
		case redis.Message:
			got[m.Channel] = string(m.Data)
		case redis.Pong: // another connection's, of either PING
			require.Contains(t, []string{"after", "again"}, m.Data)
		default:
			t.Fatalf("received %#v, want messages", v)
		}
	}
	assert.Equal(t, map[string]string{f.keep: "to " + f.keep, f.later: "to " + f.later}, got)

	for _, ch := range []string{f.movedA, f.movedB, f.stay} {
		for _, m := range f.masters {
			assert.Equal(t, 0, numSub(t, m, "SHARDNUMSUB", ch), "%s still subscribed at %s", ch, m.Addr)
		}
	}
	for ch, at := range map[string]*redistest.Server{f.movedA: f.to, f.movedB: f.to, f.stay: f.from} {
		n, err := redis.Int(redistestDo(at, "SPUBLISH", ch, "gone"))
		require.NoError(t, err)
		assert.Zero(t, n, "subscribers of %s at its owner", ch)
	}
	st := f.sub.Stats()
	assert.Zero(t, st.Lost, "no connection taken for failed")
	assert.Equal(t, 2, st.ShardChannels)
}

// unsubscribeAfterSlotMovedAway holds the subscription's lock so that the
// node's push for the moving slot is handled with the SUNSUBSCRIBEs
// already pending: it unsubscribes movedA and movedB (moved) with stay
// (not moved), subscribes later in the moved slot where the stale table
// says, and PINGs; every reply must come in order and later end at the
// slot's new owner.
func (f *sunsubFixture) unsubscribeAfterSlotMovedAway(t *testing.T) {
	t.Helper()
	h := shard.HoldSubscription(f.sub)
	moveSlot(t, f.moving, f.from, f.to, f.masters) // the node's push is on its way
	errU := h.SUnsubscribe(f.movedA, f.movedB, f.stay)
	shard.PointSlotAt(f.c, f.moving, f.from.Addr) // the client's table is stale
	wait, errS := h.SSubscribe(f.later)
	errP := h.Ping("after")
	h.Release()
	require.NoError(t, errU)
	require.NoError(t, errS)
	require.NoError(t, errP)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, wait(ctx), "later follows its slot to the new owner")
	f.expect(t, "sunsubscribe "+f.movedA, "sunsubscribe "+f.movedB, "sunsubscribe "+f.stay,
		"ssubscribe "+f.later, "pong after")
	f.checkAfter(t)
	require.Equal(t, 1, numSub(t, f.to, "SHARDNUMSUB", f.later))
}

// TestPubSubSUnsubscribeAfterSlotMovedAway unsubscribes shard channels whose
// slot moved to another master behind the client's back. Redis 7 then
// does two things on the old owner's connection: when the slot leaves, it
// sends an sunsubscribe push of its own for every channel of the slot;
// and it answers a later SUNSUBSCRIBE (or SSUBSCRIBE) of that slot with
// -MOVED, not with confirmations. The push looks just like the
// confirmation of the SUNSUBSCRIBE it races, so a subscription that
// counted replies per name took the push for the confirmation and the
// MOVED for the reply to the next command: an error reached the
// application, or the next command (another unsubscribe, a PING) lost its
// answer.
//
// The test holds the subscription's lock so that the push is handled
// with the SUNSUBSCRIBEs already pending: unsubscribe movedA and movedB
// (moved) with stay (not moved), subscribe later in the moved slot where
// the stale table says, and PING.
func TestPubSubSUnsubscribeAfterSlotMovedAway(t *testing.T) {
	f := newSunsubFixture(t)

	f.unsubscribeAfterSlotMovedAway(t)
}

// TestPubSubSUnsubscribeRacesSlotMove is the same without holding
// anything: the slot moves and the application unsubscribes at once,
// racing the node's push; the subscription may or may not have followed
// the channels yet.
func TestPubSubSUnsubscribeRacesSlotMove(t *testing.T) {
	f := newSunsubFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	moveSlot(t, f.moving, f.from, f.to, f.masters)
	require.NoError(t, f.sub.SUnsubscribe(ctx, f.movedA, f.movedB, f.stay))
	shard.PointSlotAt(f.c, f.moving, f.from.Addr)
	require.NoError(t, f.sub.SSubscribe(ctx, f.later))

	// Every name unsubscribed gets at most one confirmation (none when it
	// was between two nodes), later its subscription, and no error.
	require.NoError(t, f.sub.Ping(ctx, "after"))
	seen := map[string]int{}
	for seen["pong after"] == 0 || seen["ssubscribe "+f.later] == 0 {
		v, err := f.sub.Receive(ctx)
		var serr *shard.SubscribeError
		require.False(t, errors.As(err, &serr), "a server's error reached the application: %v", err)
		require.NoError(t, err, "seen %v", seen)
		switch m := v.(type) {
		case redis.Subscription:
			seen[m.Kind+" "+m.Channel]++
		case redis.Pong:
			seen["pong "+m.Data]++
		default:
			t.Fatalf("received %#v", v)
		}
	}
	for _, ch := range []string{f.movedA, f.movedB, f.stay} {
		assert.LessOrEqual(t, seen["sunsubscribe "+ch], 1, ch)
	}
	assert.Equal(t, 1, seen["sunsubscribe "+f.stay], "stay's node still owns its slot")
	// The pong of the second connection, if any, is skipped by checkAfter.
	f.checkAfter(t)
}
