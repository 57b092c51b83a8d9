package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// startACLScanCluster starts a scanCluster without replicas whose client
// logs in as ACL user app with rules (user admin, password admin-pass-0,
// may run everything), and never refreshes its slot map on its own.
func startACLScanCluster(t *testing.T, rules string) scanCluster {
	t.Helper()
	return startScanCluster(t, 0, redistest.Options{Users: []redistest.User{
		{Name: "admin", Password: "admin-pass-0"},
		{Name: "app", Password: "app-pass-1", Rules: rules},
	}}, func(cfg *shard.Config) {
		cfg.Pool = pool.Options{Username: "app", Password: "app-pass-1", DialTimeout: 3 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: time.Second}
		cfg.Cluster.RefreshInterval = -1
	})
}

// bounceScan runs a Scan (COUNT 10) of cl during which a slot with 60
// keys leaves the master walked first for the one walked last once that
// master's first page is in, and comes back to it when nine tenths of
// its fill keys are reported, or, afterWalk, once the second master's
// walk has begun. also, when not nil, runs as the slot comes
// back, given the first master's fill keys' tag slot chooser (another
// slot change in the same walk). It returns the keys written, the keys
// reported (with counts) and the Scan's error.
func bounceScan(ctx context.Context, t *testing.T, cl scanCluster, afterWalk bool, also func(tagOn func(prefix, addr string) string)) (want []string, seen map[string]int, err error) {
	t.Helper()
	rc, c, ms, byAddr := cl.rc, cl.c, cl.ms, cl.byAddr
	first, last := byAddr[ms[0].Addr], byAddr[ms[2].Addr]
	tag := tagOn(t, c, "bounce", ms[0].Addr, nil)
	slot := cluster.Slot(tag)
	fill, moving, ownerOf := fillAndMoving(ctx, t, c, tag)
	want = append(fill, moving...)
	var extra []string
	var extraTag string
	back := false
	if also != nil {
		// The other slot's keys are written before the Scan too: they
		// are present for its whole walk.
		also(func(prefix, addr string) string {
			extraTag = tagOn(t, c, prefix, addr, map[int]bool{slot: true})
			extra = fillKeys(ctx, t, c, "X"+extraTag, 40)
			return extraTag
		})
		want = append(want, extra...)
	}
	onFirst := 0
	for _, k := range fill {
		if ownerOf[k] == first.Addr {
			onFirst++
		}
	}
	backAt := onFirst * 9 / 10
	require.Greater(t, backAt, 10)
	if afterWalk {
		backAt = 0
	}
	comeBack := func() {
		_, err := redistest.MoveSlot(ctx, slot, last, first, rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
		require.NoError(t, err)
		back = true
		if extraTag != "" {
			moveAlso(ctx, t, cl, extraTag)
		}
	}

	seen = map[string]int{}
	sc := c.Scan(shard.ScanOptions{Count: 10})
	away, firstSeen := false, 0
	for sc.Next(ctx) {
		k := sc.Key()
		seen[k]++
		if afterWalk && away && !back && ownerOf[k] == ms[1].Addr {
			comeBack()
		}
		if ownerOf[k] != first.Addr {
			continue
		}
		firstSeen++
		switch {
		case !away:
			_, err := redistest.MoveSlot(ctx, slot, first, last, rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
			require.NoError(t, err)
			away = true
		case !back && firstSeen == backAt:
			comeBack()
		}
	}
	require.True(t, away && back, "the slot left the first master during its walk and came back")
	return want, seen, sc.Err()
}

// moveAlso moves tag's slot: from the master walked last to the one
// walked first when it is the last's, from the first to the second when
// it is the first's.
func moveAlso(ctx context.Context, t *testing.T, cl scanCluster, tag string) {
	t.Helper()
	n, err := cl.c.Router().Route(tag)
	require.NoError(t, err)
	from, to := cl.byAddr[cl.ms[2].Addr], cl.byAddr[cl.ms[0].Addr]
	if n.Addr == cl.ms[0].Addr {
		from, to = cl.byAddr[cl.ms[0].Addr], cl.byAddr[cl.ms[1].Addr]
	}
	require.Equal(t, from.Addr, n.Addr)
	_, err = redistest.MoveSlot(ctx, cluster.Slot(tag), from, to, cl.rc.Masters(), redistest.SlotMoveOptions{Batch: 10})
	require.NoError(t, err)
}

// TestReview16ScanBounceWithAnotherSlotChange: a slot with keys leaves
// the master walked first during its walk and comes back to it before
// that walk ends (or once the second master's walk has begun); as it
// comes back, that master also gains another slot (from the master
// walked last) or loses one (to the second master). The keys of both
// slots were present for the whole Scan: each must be reported, and the
// Scan must end without an error.
func TestReview16ScanBounceWithAnotherSlotChange(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and reshards it")
	}
	for _, tc := range []struct{ gain, afterWalk bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
		gain := tc.gain
		name := map[bool]string{true: "gains another", false: "loses another"}[gain] + map[bool]string{false: ", back during its walk", true: ", back after its walk"}[tc.afterWalk]
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cl := startScanCluster(t, 0, redistest.Options{}, func(cfg *shard.Config) { cfg.Cluster.RefreshInterval = -1 })
			from := cl.ms[2].Addr
			if !gain {
				from = cl.ms[0].Addr
			}
			want, seen, err := bounceScan(ctx, t, cl, tc.afterWalk, func(tagOn func(prefix, addr string) string) { tagOn("other", from) })
			require.NoError(t, err)
			requireEveryKey(t, want, seen)
		})
	}
}

// TestReview16ScanBounceWithoutClusterNodes: the client's user may not
// run CLUSTER NODES (an ACL). A slot with keys leaves the master walked
// first during its walk and comes back to it before that walk ends. Its
// keys were present for the whole Scan: each must be reported, and the
// Scan must end without an error.
func TestReview16ScanBounceWithoutClusterNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and reshards it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startACLScanCluster(t, "~* &* +@all -cluster|nodes")
	_, err := cl.c.Do(ctx, "CLUSTER", "NODES")
	require.Error(t, err, "the ACL refuses CLUSTER NODES")
	want, seen, err := bounceScan(ctx, t, cl, false, nil)
	require.NoError(t, err)
	requireEveryKey(t, want, seen)
}

// TestReview16ScanCannotTellSlots: the client's user may run neither
// CLUSTER NODES nor CLUSTER COUNTKEYSINSLOT (an ACL), so no master can
// tell the slots it holds. A slot with keys leaves the master walked
// first during its walk and comes back to it before that walk ends. Each
// key must be reported, or the Scan must end with an error matching
// ErrScanIncomplete (errors.Is) and *ScanIncompleteError (errors.As)
// naming that master; never a key missed without an error. A Scan while
// nothing moves ends with that error too: nothing proves it complete.
func TestReview16ScanCannotTellSlots(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and reshards it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startACLScanCluster(t, "~* &* +@all -cluster|nodes -cluster|countkeysinslot")
	_, err := cl.c.Do(ctx, "CLUSTER", "COUNTKEYSINSLOT", 0)
	require.Error(t, err, "the ACL refuses CLUSTER COUNTKEYSINSLOT")
	want, seen, err := bounceScan(ctx, t, cl, false, nil)
	missed := 0
	for _, k := range want {
		if seen[k] == 0 {
			missed++
		}
	}
	if missed > 0 || err != nil {
		require.Error(t, err, "%d keys missed without an error", missed)
		require.ErrorIs(t, err, shard.ErrScanIncomplete)
		var se *shard.ScanIncompleteError
		require.ErrorAs(t, err, &se)
		require.Contains(t, []string{cl.ms[0].Addr, cl.ms[1].Addr, cl.ms[2].Addr}, se.Node.Addr)
		require.NotContains(t, err.Error(), "app-pass-1")
	}

	// Nothing moves: every key is reported, and the Scan still says it
	// cannot prove that, after the last key.
	seen = map[string]int{}
	sc := cl.c.Scan(shard.ScanOptions{Count: 50})
	for sc.Next(ctx) {
		seen[sc.Key()]++
	}
	requireEveryKey(t, want, seen)
	require.True(t, errors.Is(sc.Err(), shard.ErrScanIncomplete), "got %v", sc.Err())
}
