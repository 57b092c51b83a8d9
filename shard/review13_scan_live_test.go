package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// liveMove moves one slot, keys and all, from src to dst the way
// redis-cli --cluster reshard does: SETSLOT IMPORTING on dst, MIGRATING on
// src, MIGRATE of the keys in small batches, SETSLOT NODE on every master.
// Each call of step does one of those stages, so that a test can spread a
// move over the pages of a Scan. It never calls t: a goroutine may drive it.
type liveMove struct {
	src, dst     *redistest.Server
	srcID, dstID string
	all          []*redistest.Server
	slot         int
	batch        int
	stage        int // 0 not begun, 1 moving keys, 2 keys moved, 3 done
}

func (m *liveMove) done() bool { return m.stage == 3 }

// step does the next stage; with finish false it stops once the keys are
// all moved, before SETSLOT NODE (the slot stays IMPORTING/MIGRATING).
func (m *liveMove) step(finish bool) error {
	s := strconv.Itoa(m.slot)
	switch m.stage {
	case 0:
		if _, err := m.dst.Do("CLUSTER", "SETSLOT", s, "IMPORTING", m.srcID); err != nil {
			return err
		}
		if _, err := m.src.Do("CLUSTER", "SETSLOT", s, "MIGRATING", m.dstID); err != nil {
			return err
		}
		m.stage = 1
	case 1:
		out, err := m.src.Do("CLUSTER", "GETKEYSINSLOT", s, strconv.Itoa(m.batch))
		if err != nil {
			return err
		}
		keys := strings.Fields(out)
		if len(keys) == 0 {
			m.stage = 2
			return nil
		}
		host, port, _ := strings.Cut(m.dst.Addr, ":")
		if _, err := m.src.Do(append([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}, keys...)...); err != nil {
			return err
		}
	case 2:
		if !finish {
			return nil
		}
		// The importing master first, then the one that gave the slot
		// away, then the others (redis-cli's order).
		for _, o := range append([]*redistest.Server{m.dst, m.src}, m.all...) {
			if _, err := o.Do("CLUSTER", "SETSLOT", s, "NODE", m.dstID); err != nil {
				return err
			}
		}
		m.stage = 3
	}
	return nil
}

// run moves the whole slot.
func (m *liveMove) run() error {
	for !m.done() {
		if err := m.step(true); err != nil {
			return err
		}
	}
	return nil
}

// tagOn returns a hash tag whose slot the client routes to addr and is
// not in avoid.
func tagOn(t *testing.T, c *shard.Client, prefix, addr string, avoid map[int]bool) string {
	t.Helper()
	for i := 0; ; i++ {
		tag := fmt.Sprintf("{%s%d}", prefix, i)
		n, err := c.Router().Route(tag)
		require.NoError(t, err)
		if n.Addr == addr && !avoid[cluster.Slot(tag)] {
			return tag
		}
	}
}

// fillKeys writes n keys prefix:i, in MSETs of 500 (split by slot by the
// client), and returns them.
func fillKeys(ctx context.Context, t *testing.T, c *shard.Client, prefix string, n int) []string {
	t.Helper()
	keys := make([]string, 0, n)
	var args []any
	for i := range n {
		k := fmt.Sprintf("%s:%d", prefix, i)
		keys = append(keys, k)
		args = append(args, k, i)
		if len(args) == 1000 || i == n-1 {
			_, err := c.Do(ctx, "MSET", args...)
			require.NoError(t, err)
			args = args[:0]
		}
	}
	return keys
}

// requireEveryKey checks that each of want was reported at least once,
// naming per group (the part before the first ':') how many were missed.
func requireEveryKey(t *testing.T, want []string, seen map[string]int) {
	t.Helper()
	require.NotEmpty(t, want)
	missed := map[string]int{}
	for _, k := range want {
		if seen[k] == 0 {
			g, _, _ := strings.Cut(k, ":")
			missed[g]++
		}
	}
	require.Empty(t, missed, "keys present for the whole Scan and not reported, by group")
}

// TestReview13ScanWhileSlotsAreResharded: three slots move between the
// three masters of a cluster while a Scan (COUNT 20, many pages) walks
// its 5,000 keys, one stage of a move per page: one from the master
// walked last to the one walked first and one to the second, done while
// the first is walked, and one from the second master to the first whose
// keys leave as the second's walk begins and whose SETSLOT NODE comes
// only after the Scan ends (a reshard still under way). Then, on the same
// cluster, a goroutine moves the three slots back at its own pace during a
// second Scan. Every key was present for the whole of each Scan, none was
// deleted: each must be reported at least once, and each Scan must end
// without an error.
func TestReview13ScanWhileSlotsAreResharded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and reshards it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := startScanCluster(t, 0, redistest.Options{}, func(cfg *shard.Config) { cfg.Cluster.RefreshInterval = -1 })
	rc, c, ms, byAddr, ids := cl.rc, cl.c, cl.ms, cl.byAddr, cl.ids
	require.Len(t, byAddr, 3)
	all := rc.Masters()

	avoid := map[int]bool{}
	tagA := tagOn(t, c, "a", ms[2].Addr, avoid)
	avoid[cluster.Slot(tagA)] = true
	tagB := tagOn(t, c, "b", ms[2].Addr, avoid)
	avoid[cluster.Slot(tagB)] = true
	tagC := tagOn(t, c, "c", ms[1].Addr, avoid)
	want := fillKeys(ctx, t, c, "fill", 4820)
	want = append(want, fillKeys(ctx, t, c, "A"+tagA, 60)...)
	want = append(want, fillKeys(ctx, t, c, "B"+tagB, 60)...)
	want = append(want, fillKeys(ctx, t, c, "C"+tagC, 60)...)
	ownerOf := keyOwners(t, c, want[:4820]) // the fill keys never move
	mv := func(tag string, from, to string) *liveMove {
		return &liveMove{src: byAddr[from], dst: byAddr[to], srcID: ids[from], dstID: ids[to],
			all: all, slot: cluster.Slot(tag), batch: 10}
	}
	a, b := mv(tagA, ms[2].Addr, ms[0].Addr), mv(tagB, ms[2].Addr, ms[1].Addr)
	cm := mv(tagC, ms[1].Addr, ms[0].Addr)

	// First Scan: the moves go one stage per page, between pages.
	seen := map[string]int{}
	sc := c.Scan(shard.ScanOptions{Count: 20})
	reported, second := 0, false
	for sc.Next(ctx) {
		k := sc.Key()
		seen[k]++
		reported++
		if !second && ownerOf[k] == ms[1].Addr {
			// The second master's walk has begun: half of slot C's
			// keys leave it for the first master, walked already.
			second = true
			require.True(t, a.done() && b.done(), "A and B moved while the first master was walked")
			for range 4 { // IMPORTING/MIGRATING, then 3 batches of 10
				require.NoError(t, cm.step(false))
			}
		}
		if reported%20 == 0 && reported >= 60 {
			switch {
			case !a.done():
				require.NoError(t, a.step(true))
			case !b.done():
				require.NoError(t, b.step(true))
			}
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, second, "the walk reached the second master")
	require.False(t, cm.done(), "slot C is still being migrated as the Scan ends")
	requireEveryKey(t, want, seen)

	// Slot C's move ends; then a goroutine moves the three slots back at
	// its own pace, from the Scan's 5th page on, while a second Scan walks.
	require.NoError(t, cm.run())
	back := []*liveMove{
		mv(tagA, ms[0].Addr, ms[2].Addr), mv(tagB, ms[1].Addr, ms[2].Addr), mv(tagC, ms[0].Addr, ms[1].Addr),
	}
	for _, m := range back {
		m.batch = 5
	}
	start, moverDone := make(chan struct{}), make(chan error, 1)
	go func() {
		select {
		case <-start:
		case <-ctx.Done():
			moverDone <- ctx.Err()
			return
		}
		for _, m := range back {
			if err := m.run(); err != nil {
				moverDone <- err
				return
			}
		}
		moverDone <- nil
	}()
	seen = map[string]int{}
	sc = c.Scan(shard.ScanOptions{Count: 20})
	reported = 0
	for sc.Next(ctx) {
		seen[sc.Key()]++
		reported++
		if reported == 100 {
			close(start)
		}
	}
	scanErr := sc.Err()
	if reported < 100 {
		close(start)
	}
	require.NoError(t, <-moverDone)
	require.NoError(t, scanErr)
	requireEveryKey(t, want, seen)
}

// TestReview13ScanWhileAMasterFailsOver: during a Scan of a cluster of
// three masters with a replica each, the master being walked fails over
// (CLUSTER FAILOVER on its replica, from a goroutine) as its walk begins,
// and the master walked last is killed once that failover is over, while
// the second is still walked, its replica taking over. Every key (all on the replicas before the Scan)
// must be reported at least once and the Scan must end without an error.
func TestReview13ScanWhileAMasterFailsOver(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and fails masters over")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := startScanCluster(t, 1, redistest.Options{NodeTimeout: time.Second}, func(cfg *shard.Config) { cfg.Cluster.MaxRetryWait = 30 * time.Second })
	rc, c, ms, byAddr := cl.rc, cl.c, cl.ms, cl.byAddr
	want := fillKeys(ctx, t, c, "fo", 5000)
	for _, m := range rc.Masters() {
		acked, err := m.Do("WAIT", "1", "5000")
		require.NoError(t, err)
		require.Equal(t, "1", acked, "the replica of %s has every key", m.Addr)
	}
	ownerOf := keyOwners(t, c, want)
	rep1, err := rc.ReplicaOf(byAddr[ms[1].Addr])
	require.NoError(t, err)
	victim := byAddr[ms[2].Addr]
	rep2, err := rc.ReplicaOf(victim)
	require.NoError(t, err)

	promoted := func(s *redistest.Server) bool {
		role, err := s.Do("ROLE")
		return err == nil && strings.HasPrefix(role, "master")
	}
	// The failover runs from a goroutine while the second master is
	// walked; once it is over (20 pages on), the third master dies.
	start, failedOver := make(chan struct{}), make(chan error, 1)
	go func() {
		select {
		case <-start:
		case <-ctx.Done():
			failedOver <- ctx.Err()
			return
		}
		if _, err := rep1.Do("CLUSTER", "FAILOVER"); err != nil {
			failedOver <- err
			return
		}
		for !promoted(rep1) {
			select {
			case <-ctx.Done():
				failedOver <- errors.New("the replica of the second master was not promoted")
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
		failedOver <- nil
	}()
	seen := map[string]int{}
	sc := c.Scan(shard.ScanOptions{Count: 20})
	onSecond, killed := 0, false
	for sc.Next(ctx) {
		k := sc.Key()
		seen[k]++
		if ownerOf[k] != ms[1].Addr || killed {
			continue
		}
		onSecond++
		if onSecond == 1 {
			close(start)
		}
		if onSecond == 400 {
			require.NoError(t, <-failedOver)
			require.NoError(t, victim.Kill())
			killed = true
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, killed, "the third master died during the Scan")
	require.True(t, promoted(rep2), "the killed master's replica took over")
	requireEveryKey(t, want, seen)
}

// TestReview13ScanWhileANodeJoinsAndTakesSlots: while a Scan walks a
// cluster of three masters, a fourth node joins (CLUSTER MEET) and two
// slots with their keys move to it, one stage per page: one from the
// master walked first (walked already), and one from the master walked
// last whose keys all move but whose SETSLOT NODE does not come before
// the Scan ends. Every key must be reported at least once and the Scan
// must end without an error.
func TestReview13ScanWhileANodeJoinsAndTakesSlots(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and a fourth master")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := startScanCluster(t, 0, redistest.Options{}, func(cfg *shard.Config) { cfg.Cluster.RefreshInterval = -1 })
	rc, c, ms, byAddr, ids := cl.rc, cl.c, cl.ms, cl.byAddr, cl.ids
	avoid := map[int]bool{}
	tagA := tagOn(t, c, "a", ms[0].Addr, avoid)
	tagB := tagOn(t, c, "b", ms[2].Addr, avoid)
	want := fillKeys(ctx, t, c, "fill", 4880)
	want = append(want, fillKeys(ctx, t, c, "A"+tagA, 60)...)
	want = append(want, fillKeys(ctx, t, c, "B"+tagB, 60)...)
	nw := redistest.StartTB(t, redistest.Options{Cluster: true})
	nwID := nodeID(t, nw)
	all := append([]*redistest.Server{nw}, rc.Masters()...)
	moves := []*liveMove{
		{src: byAddr[ms[0].Addr], dst: nw, srcID: ids[ms[0].Addr], dstID: nwID, all: all, slot: cluster.Slot(tagA), batch: 10},
		{src: byAddr[ms[2].Addr], dst: nw, srcID: ids[ms[2].Addr], dstID: nwID, all: all, slot: cluster.Slot(tagB), batch: 10},
	}

	seen := map[string]int{}
	sc := c.Scan(shard.ScanOptions{Count: 20})
	reported, joined := 0, false
	for sc.Next(ctx) {
		seen[sc.Key()]++
		reported++
		if reported == 200 {
			host, port, _ := strings.Cut(ms[0].Addr, ":")
			_, err := nw.Do("CLUSTER", "MEET", host, port)
			require.NoError(t, err)
			waitFor(t, 30*time.Second, "every node to know the new one", func() bool {
				for _, m := range all {
					nodes, err := m.Do("CLUSTER", "NODES")
					if err != nil || strings.Count(nodes, "\n")+1 < len(all) ||
						strings.Contains(nodes, "handshake") || !strings.Contains(nodes, nwID) {
						return false
					}
				}
				info, err := nw.Do("CLUSTER", "INFO")
				return err == nil && strings.Contains(info, "cluster_state:ok")
			})
			joined = true
		}
		if joined && reported%20 == 0 {
			if !moves[0].done() {
				require.NoError(t, moves[0].step(true))
			} else {
				require.NoError(t, moves[1].step(false))
			}
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, joined)
	require.True(t, moves[0].done(), "slot %d moved during the Scan", moves[0].slot)
	require.Equal(t, 2, moves[1].stage, "slot %d's keys moved, the slot still IMPORTING/MIGRATING", moves[1].slot)
	requireEveryKey(t, want, seen)
}
