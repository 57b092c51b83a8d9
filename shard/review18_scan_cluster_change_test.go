package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// clusterScanAcrossAChange walks Scan s of client c (whose keys live on
// cluster rc) until the walk of the first master it met is over (a key of
// another master is reported), then moves the slot of a key of a master
// not walked yet to that first master, runs change, and reads the Scan
// to its end. It returns the keys reported and the key whose slot moved.
func clusterScanAcrossAChange(ctx context.Context, t *testing.T, rc *redistest.Cluster, s *shard.Scanner, seen map[string]int, change func()) string {
	t.Helper()
	masterOf := func(k string) *redistest.Server {
		m, err := rc.MasterOfSlot(cluster.Slot(k))
		require.NoError(t, err)
		return m
	}
	var first, second *redistest.Server
	for second == nil && s.Next(ctx) {
		seen[s.Key()]++
		m := masterOf(s.Key())
		if first == nil {
			first = m
		} else if m.Addr != first.Addr {
			second = m
		}
	}
	require.NoError(t, s.Err())
	require.NotNil(t, second, "the Scan reached a second master")
	var third *redistest.Server
	for _, m := range rc.Masters() {
		if m.Addr != first.Addr && m.Addr != second.Addr {
			third = m
		}
	}
	require.NotNil(t, third)
	moved, _, err := rc.KeyOn(third, "r18cc-moved")
	require.NoError(t, err)
	require.NoError(t, rcSet(ctx, third, moved))
	_, err = redistest.MoveSlot(ctx, cluster.Slot(moved), third, first, rc.Masters(), redistest.SlotMoveOptions{})
	require.NoError(t, err)
	change()
	for s.Next(ctx) {
		seen[s.Key()]++
	}
	return moved
}

// rcSet writes key on server m directly.
func rcSet(ctx context.Context, m *redistest.Server, key string) error {
	c, err := shard.New(ctx, shard.Config{Shards: nil, Mode: shard.ModeCluster, Seeds: []string{m.Addr}})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Do(ctx, "SET", key, "x")
	return err
}

// requireReportedOrIncomplete: every key is reported, or the Scan ended
// with a *ScanIncompleteError; never a key missed silently.
func requireReportedOrIncomplete(t *testing.T, s *shard.Scanner, keys []string, seen map[string]int) {
	t.Helper()
	if err := s.Err(); err != nil {
		require.True(t, errors.Is(err, shard.ErrScanIncomplete), "%v", err)
		return
	}
	requireEveryKey(t, keys, seen)
}

// TestReview18ScanOutlivesFinishIntoAClusterAndASlotMoves: a Scan begun
// while a client migrates into a Redis Cluster (every key moved) that
// meets FinishMigration, then a slot moving from a master not walked yet
// to one walked already (the client, a cluster client now, follows the
// cluster's slot moves), must report the keys of that slot, or end with
// a *ScanIncompleteError: never miss them silently.
func TestReview18ScanOutlivesFinishIntoAClusterAndASlotMoves(t *testing.T) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from, to := ringConfig(servers), clusterConfig(rc.Seeds()...)
	c := newClient(t, armedConfig(from, to))
	keys := fillKeys(ctx, t, c, "r18cf", 600) // written to the cluster
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Count: 5})
	require.True(t, s.Next(ctx), "%v", s.Err())
	seen[s.Key()]++
	require.NoError(t, c.FinishMigration())
	moved := clusterScanAcrossAChange(ctx, t, rc, s, seen, func() {})
	requireReportedOrIncomplete(t, s, append(keys, moved), seen)
}
