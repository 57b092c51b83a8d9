package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// With cluster-preferred-endpoint-type unknown-endpoint (set at run time
// with CONFIG SET), CLUSTER SHARDS gives every node an empty endpoint,
// CLUSTER SLOTS a null one, and MOVED and ASK name no host (":7001"):
// the client dials the host it sent the command to, with the port from
// the reply. Routing, a MOVED and an ASK all work on a real cluster.
func TestReview15UnknownEndpointRoutesAndFollowsRedirects(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	for _, s := range append(rc.Masters(), rc.Replicas()...) {
		_, err := s.Do("CONFIG", "SET", "cluster-preferred-endpoint-type", "unknown-endpoint")
		require.NoError(t, err)
	}
	ms := rc.Masters()
	require.Len(t, ms, 3)
	a, b, other := ms[0], ms[1], ms[2]

	// What the servers say now, read without the client.
	conn, err := redis.Dial("tcp", a.Addr)
	require.NoError(t, err)
	defer conn.Close()
	key, slot := keyOnMaster(t, rc, a, "unknown-endpoint")
	otherKey, _ := keyOnMaster(t, rc, other, "unknown-endpoint-other")
	_, err = conn.Do("GET", otherKey)
	require.Error(t, err)
	require.Regexp(t, `^MOVED \d+ :\d+$`, err.Error(), "the server names no host")

	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 50; i++ {
		k := "unknown-endpoint-routing:" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		_, err := c.Do(ctx, "SET", k, i)
		require.NoError(t, err, "SET %s", k)
	}
	moved0, ask0, _ := stats(c)
	require.Zero(t, moved0, "routing by the discovered table needs no redirect")

	// A MOVED ":port".
	assignSlot(t, slot, a, b)
	t.Cleanup(func() { assignSlot(t, slot, b, a) })
	_, err = c.Do(ctx, "SET", key, "v")
	require.NoError(t, err)
	v, err := redis.String(b.Do("GET", key))
	require.NoError(t, err)
	require.Equal(t, "v", v, "the MOVED was followed to the new owner")
	_, err = b.Do("DEL", key)
	require.NoError(t, err)
	moved, _, _ := stats(c)
	require.Greater(t, moved, moved0)

	// An ASK ":port": the slot migrates back from b to a.
	migratingSlot(t, slot, b, a)
	_, err = c.Do(ctx, "SET", key, "w")
	require.NoError(t, err)
	_, ask, _ := stats(c)
	require.Greater(t, ask, ask0)
	_, err = conn.Do("ASKING")
	require.NoError(t, err)
	v, err = redis.String(conn.Do("GET", key))
	require.NoError(t, err)
	require.Equal(t, "w", v, "the ASK was followed to the importing node")

	for _, n := range c.Router().(*shard.ClusterRouter).AllNodes() {
		require.NotEmpty(t, n.Addr)
	}
}

// A sharded subscription follows its channel's slot to another master on
// a cluster with unknown-endpoint, where the MOVED that the old owner
// answers the subscription names no host.
func TestReview15UnknownEndpointSSubscribeFollowsTheSlot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{Args: []string{"--cluster-preferred-endpoint-type", "unknown-endpoint"}})
	ms := rc.Masters()
	require.Len(t, ms, 3)
	a, b := ms[0], ms[1]
	channel, slot := keyOnMaster(t, rc, a, "unknown-endpoint-channel")
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sub, err := c.SSubscribe(ctx, channel)
	require.NoError(t, err)
	defer sub.Close()

	moveSlot(t, slot, a, b, ms)
	got := make(chan string, 16)
	go func() {
		defer close(got)
		for {
			m, err := sub.Receive(ctx)
			if err != nil {
				return
			}
			if msg, ok := m.(redis.Message); ok {
				got <- string(msg.Data)
			}
		}
	}()
	// Published at the new owner directly: only a subscription there
	// receives it.
	for {
		n, err := b.Do("SPUBLISH", channel, "moved")
		require.NoError(t, err)
		if n != "0" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the subscription never reached the slot's new owner")
		case <-time.After(50 * time.Millisecond):
		}
	}
	select {
	case m, ok := <-got:
		require.True(t, ok, "the subscription ended")
		require.Equal(t, "moved", m)
	case <-ctx.Done():
		t.Fatal("no message")
	}
}
