package reshard

import (
	"context"
	"errors"
	"sync"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard"
)

// maxRescans bounds the passes the mover makes over old nodes where its
// closing verification found keys left behind (verifyAndRescan).
const maxRescans = 3

// verifyAndRescan runs the verification that ends a move, of the new
// nodes and the old ones (olds), and while it finds keys left on an old
// node that the mover moves from there, scans those nodes again (drain:
// the same rules as a run of its own, a newer copy at the new owner
// kept), and verifies again, at most maxRescans times, and no more once
// a pass moved nothing. It returns the
// last verification, the passes made and the keys they moved. Keys are left so
// when a slot of an old cluster moves, by its operator, to a master the
// mover has already scanned: no scan saw them.
//
// Out of a cluster the old topology is read afresh for each
// verification: its masters now (one the mover did not list is scanned
// too), and the map that tells strays. The map read when the move began
// placed the slot's keys on its former master, and called them strays,
// which the mover leaves; a cluster's master holds only keys of the
// slots it serves or imports, and the mover moves every key it finds
// there.
func (m *mover) verifyAndRescan(ctx context.Context, info shard.MigrationInfo, olds []shard.Node) (v *VerifyReport, rescans int, moved int64, err error) {
	for pass := 0; ; pass++ {
		old, nodes, done, err := m.oldTopology(ctx, info, olds)
		if err != nil {
			return nil, rescans, moved, err
		}
		v, err = verifyNodes(ctx, m.pools, info.To, appendNodes(info.To.Nodes(), nodes), nil, old, 0, nil)
		done()
		if err != nil {
			return nil, rescans, moved, err
		}
		again := m.leftBehind(v, nodes)
		if len(again) == 0 || pass == maxRescans {
			return v, rescans, moved, nil
		}
		before, busyBefore := m.moved.Load(), m.busy.Load()
		m.rescan = true
		err = m.drainAll(ctx, again)
		rescans++
		moved += m.moved.Load() - before
		if err != nil {
			return nil, rescans, moved, err
		}
		if m.moved.Load() == before && m.busy.Load() == busyBefore {
			// Nothing moved: the keys are where the mover cannot reach
			// them (on a master that lost their slot, a slot move inside
			// the old cluster aborted), and another pass finds them
			// again. v still says where they are.
			return v, rescans, moved, nil
		}
	}
}

// oldTopology returns the router that tells strays in the closing
// verification and the old nodes to scan: the mover's own (info.From,
// olds), or, out of a cluster, a fresh read of it (its masters added to
// olds); done releases what the read holds.
func (m *mover) oldTopology(ctx context.Context, info shard.MigrationInfo, olds []shard.Node) (shard.Router, []shard.Node, func(), error) {
	if !m.fromCluster() {
		return info.From, olds, func() {}, nil
	}
	c, err := placementClient(ctx, m.opts.From, m.opts.To.Pool)
	if err != nil {
		return nil, nil, nil, errtext.Errorf("shardis: migration from: %w", err)
	}
	return c.Router(), appendNodes(olds, c.Router().Nodes()), func() { c.Close() }, nil
}

// leftBehind returns the old nodes (of olds) on which the verification v
// found keys the mover moves: out of a cluster every misplaced key on an
// old master (drain), out of a ring the misplaced keys that are not
// strays, found on old nodes.
func (m *mover) leftBehind(v *VerifyReport, olds []shard.Node) []shard.Node {
	if v.Misplaced == 0 || (!m.fromCluster() && v.Misplaced == v.Strays) {
		return nil
	}
	var out []shard.Node
	for _, n := range olds {
		if v.PerNode[n.Addr] > 0 {
			out = append(out, n)
		}
	}
	return out
}

// drainAll drains every node of nodes at once (drain), and returns their
// errors joined.
func (m *mover) drainAll(ctx context.Context, nodes []shard.Node) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.drain(ctx, n)
			if testHookDrained != nil {
				testHookDrained(n)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
