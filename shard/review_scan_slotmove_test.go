package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReviewScanClusterSlotMoving: a slot moves from one master to another
// (CLUSTER SETSLOT, MIGRATE: what redis-cli --cluster reshard does) behind
// the client's back; the client has not met a MOVED and still maps the
// slot to its old master. A Scan reports every key once, both while the
// slot is half moved (the moved keys sit on the importing master, which
// the slot map does not name) and once the move is done (the keys sit on
// a master the client's stale map does not name). Filtering what a master
// returns by the client's slot map dropped those keys silently.
func TestReviewScanClusterSlotMoving(t *testing.T) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	c := newClient(t, clusterConfig(rc.Seeds()...))
	const n = 100
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("{mv}:%d", i)
		_, err := c.Do(ctx, "SET", keys[i], i)
		require.NoError(t, err)
	}
	slot := cluster.Slot(keys[0])
	src, err := rc.MasterOfSlot(slot)
	require.NoError(t, err)
	dst, err := rc.OtherMaster(src)
	require.NoError(t, err)
	id := func(s *redistest.Server) string {
		v, err := s.Do("CLUSTER", "MYID")
		require.NoError(t, err)
		return v
	}
	srcID, dstID := id(src), id(dst)
	s := strconv.Itoa(slot)
	_, err = dst.Do("CLUSTER", "SETSLOT", s, "IMPORTING", srcID)
	require.NoError(t, err)
	_, err = src.Do("CLUSTER", "SETSLOT", s, "MIGRATING", dstID)
	require.NoError(t, err)
	host, port, _ := strings.Cut(dst.Addr, ":")
	migrate := func(ks []string) {
		args := append([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}, ks...)
		_, err := src.Do(args...)
		require.NoError(t, err)
	}
	migrate(keys[:n/2])

	scanAll := func(what string) {
		t.Helper()
		owner, err := c.Router().Route(keys[0])
		require.NoError(t, err)
		require.Equal(t, src.Addr, owner.Addr, "the client's map still names the old master")
		seen := map[string]int{}
		sc := c.Scan(shard.ScanOptions{Match: "{mv}:*", Count: 10})
		for sc.Next(ctx) {
			seen[sc.Key()]++
		}
		require.NoError(t, sc.Err(), what)
		require.Len(t, seen, n, what)
		for k, times := range seen {
			require.Equal(t, 1, times, "%s: %s", what, k)
		}
	}
	scanAll("slot half moved")

	migrate(keys[n/2:])
	for _, m := range rc.Masters() {
		_, err := m.Do("CLUSTER", "SETSLOT", s, "NODE", dstID)
		require.NoError(t, err)
	}
	scanAll("slot moved, client's map stale")
}
