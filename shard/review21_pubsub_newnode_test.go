package shard_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A master joins the cluster and a slot with subscribed shard channels
// moves to it; one of them is unsubscribed while it moves. The kept one
// must be subscribed at the new master and nowhere else, the other
// nowhere at all (PUBSUB SHARDCHANNELS on every node), both gaps counted;
// the keyspace subscription must be on the new master too, its gap (the
// events of the slot from the moment the new master owned it) counted.
func TestReview21PubSubNodeAddedFollowedWithoutStrays(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	masters := rc.Masters()
	require.Len(t, masters, 3)
	c := newClient(t, clusterConfig(rc.Seeds()...))
	const kept, left = "{r21add}:kept", "{r21add}:left"
	slot := cluster.Slot(kept)
	src, err := rc.MasterOfSlot(slot)
	require.NoError(t, err)

	sub, err := c.SSubscribe(ctx, kept, left)
	require.NoError(t, err)
	defer sub.Close()
	ks, err := c.SubscribeKeyspace(ctx, shard.KeyspaceOptions{Enable: "KEA", Patterns: []string{"__keyevent@*__:set"}})
	require.NoError(t, err)
	defer ks.Close()
	require.Zero(t, ks.Stats().Resubscribed)

	nw := redistest.StartTB(t, redistest.Options{Cluster: true})
	host, port, ok := strings.Cut(masters[0].Addr, ":")
	require.True(t, ok)
	_, err = nw.Do("CLUSTER", "MEET", host, port)
	require.NoError(t, err)
	nwID := nodeID(t, nw)
	all := append([]*redistest.Server{nw}, masters...)
	waitFor(t, 30*time.Second, "every node to know the new master", func() bool {
		for _, m := range all {
			nodes, err := m.Do("CLUSTER", "NODES")
			if err != nil || strings.Count(strings.TrimSpace(nodes), "\n")+1 < len(all) ||
				strings.Contains(nodes, "handshake") || !strings.Contains(nodes, nwID) {
				return false
			}
		}
		return true
	})
	waitFor(t, 30*time.Second, "the new master to see the cluster up", func() bool {
		info, err := nw.Do("CLUSTER", "INFO")
		return err == nil && strings.Contains(info, "cluster_state:ok")
	})

	moveSlot(t, slot, src, nw, all)
	require.NoError(t, sub.SUnsubscribe(ctx, left))

	shardChannels := func(s *redistest.Server) []string {
		out, err := s.Do("PUBSUB", "SHARDCHANNELS", "{r21add}:*")
		require.NoError(t, err)
		return strings.Fields(out)
	}
	waitFor(t, 30*time.Second, "the kept channel on the new master alone", func() bool {
		return slices.Equal(shardChannels(nw), []string{kept}) && numSub(t, nw, "SHARDNUMSUB", kept) == 1
	})
	waitFor(t, 30*time.Second, "the client routing SPUBLISH to the new master", func() bool {
		n, err := redis.Int(c.Do(ctx, "SPUBLISH", kept, "probe"))
		return err == nil && n == 1
	})
	for _, m := range masters {
		assert.Empty(t, shardChannels(m), "stray shard channel on %s", m.Addr)
	}
	n, err := redis.Int(c.Do(ctx, "SPUBLISH", left, "after"))
	require.NoError(t, err)
	assert.Zero(t, n, "the unsubscribed channel still has a subscriber")

	// The unsubscribe is confirmed, the messages published after the
	// move come, and nothing of the unsubscribed channel.
	_, err = c.Do(ctx, "SPUBLISH", kept, "end")
	require.NoError(t, err)
	var got []string
	confirmed := false
	for {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := sub.Receive(rctx)
		rcancel()
		require.NoError(t, err, "got %v", got)
		switch m := v.(type) {
		case redis.Message:
			got = append(got, m.Channel+"="+string(m.Data))
		case redis.Subscription:
			if m.Kind == "sunsubscribe" && m.Channel == left {
				confirmed = true
			}
		}
		if len(got) > 0 && got[len(got)-1] == kept+"=end" {
			break
		}
	}
	assert.True(t, confirmed, "no confirmation of the unsubscribe")
	for _, g := range got {
		assert.True(t, g == kept+"=probe" || g == kept+"=end", "unexpected %q", g)
	}
	assert.Equal(t, kept+"=end", got[len(got)-1])
	st := sub.Stats()
	assert.Positive(t, st.Moved, "the move of the kept channel is a gap: %+v", st)
	assert.Positive(t, st.Resubscribed, "the kept channel subscribed at the new master: %+v", st)

	// Keyspace events: on the new master too, counted as a gap.
	waitFor(t, 30*time.Second, "the keyspace pattern on the new master", func() bool {
		np, err := nw.Do("PUBSUB", "NUMPAT")
		return err == nil && np == "1"
	})
	key := "{r21add}:key"
	_, err = c.Do(ctx, "SET", key, "1")
	require.NoError(t, err)
	for {
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		v, err := ks.Receive(rctx)
		rcancel()
		require.NoError(t, err)
		if m, ok := v.(redis.Message); ok {
			if ev, ok := shard.ParseKeyspaceEvent(m); ok && ev.Key == key {
				break
			}
		}
	}
	assert.Positive(t, ks.Stats().Resubscribed, "the new master's events before the subscription there: %+v", ks.Stats())
}
