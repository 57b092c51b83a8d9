package reshard

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard"
)

// A slot of the cluster that keys move into may move to another master
// (its operator's SETSLOT MIGRATING/IMPORTING, MIGRATE of its keys, then
// SETSLOT NODE) after the mover read the cluster's map. The slot's former
// master then refuses the RESTORE of the slot's keys with MOVED: MIGRATE
// answers "ERR Target instance replied with error: MOVED <slot> <addr>"
// (the keys before and after it in the batch that the target took have
// moved, the slot's keys stay at the old node), and a DUMP/RESTORE batch
// fails before it deletes anything. The mover follows the MOVED as a
// cluster client does: it reads the cluster's map again, and moves the
// run's keys again, each to its master by that map (the slot's keys to
// the master the MOVED names, should the map read still place them at the
// former one); keys that moved already are gone from the old node, or
// held by the new one with the value dumped, and count once. At most the
// new cluster's MaxRedirects times for one run; past that the run fails
// with a *shard.RetryError (shard.ErrRetryBudget), its keys either moved
// or still at the old node.
//
// A slot being moved inside the new cluster (MIGRATING at its owner,
// IMPORTING at another master) makes its owner refuse the RESTORE of a
// key it does not hold with ASK: a new key of such a slot belongs at the
// importing master, as a cluster client writes it there. The mover
// follows the ASK as a cluster client does, the map left as it is: the
// run's keys of that slot move to the importing master named, each
// RESTORE there after an ASKING. MIGRATE cannot send ASKING (from a server
// out of cluster mode it sends a plain RESTORE, which an importing master
// refuses with MOVED back to the owner), so those keys move with
// DUMP/RESTORE (dumpMoveAt with dstAsking), the old node's writes paused
// meanwhile as for any DUMP/RESTORE batch. Within the same MaxRedirects.

// targetErrPrefix begins the error of a MIGRATE whose target refused a
// key; the target's own error follows it.
const targetErrPrefix = "ERR Target instance replied with error: "

// newMoved returns the MOVED or ASK with which new node dst, a master of
// the cluster keys move into, refused a key of the move that failed with
// err (MIGRATE's target error, or a RESTORE's own), and whether it was
// one.
func (m *mover) newMoved(dst shard.Node, err error) (cluster.Redirect, bool) {
	if _, ok := m.to.(*shard.ClusterRouter); !ok || err == nil || errors.Is(err, shard.ErrRetryBudget) {
		return cluster.Redirect{}, false
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return cluster.Redirect{}, false
	}
	msg, ok := strings.CutPrefix(string(re), targetErrPrefix)
	if !ok {
		// A RESTORE's (DUMP/RESTORE), which dst itself answered.
		var ne *shard.NodeError
		if !errors.As(err, &ne) || ne.Node.Addr != dst.Addr {
			return cluster.Redirect{}, false
		}
	}
	return cluster.ParseRedirect(msg, dst.Addr)
}

// newMaxRedirects is how many MOVED or ASK replies of the new cluster one
// run of keys follows: the new cluster's MaxRedirects, by default a
// cluster client's (shard.DefaultMaxRedirects).
func (m *mover) newMaxRedirects() int {
	if n := m.opts.To.Cluster.MaxRedirects; n > 0 {
		return n
	}
	return shard.DefaultMaxRedirects
}

// followNewMoved moves keys (of sizes bytes each) from src again, after
// new node dst refused some with the MOVED or ASK r (err: the run's error)
// at hop: after a MOVED the cluster's map is read again; the keys are
// grouped by the master the map names, the slot of r's at r's master at
// the least, and moved there (move, at hop+1; asking for the keys an ASK
// sent to the importing master). It returns how many moved.
func (m *mover) followNewMoved(ctx context.Context, src, dst shard.Node, keys []string, sizes []int64, r cluster.Redirect, err error, hop int,
	move func(dst shard.Node, keys []string, sizes []int64, hop int, asking bool) (int, error)) (int, error) {
	if hop >= m.newMaxRedirects() {
		var re redis.Error
		errors.As(err, &re)
		cmd := "MIGRATE"
		if m.opts.Dump {
			cmd = "RESTORE"
		}
		return 0, m.migrateErr(src, dst, fmt.Sprintf("moving %d keys", len(keys)),
			&shard.RetryError{Command: cmd, Attempts: hop + 1, Last: string(re) + " (too many redirects of the new cluster)", Err: err})
	}
	ask := r.Kind == cluster.Ask
	if m.refreshTo != nil && !ask {
		// Best effort: the MOVED itself says where its slot's keys go;
		// the map read again routes the later keys of that slot there too.
		_ = m.refreshTo(ctx)
	}
	// Grouped by master, and apart those an ASK sent to theirs: a
	// master may import one slot and own others.
	type group struct {
		to     shard.Node
		asking bool
	}
	groups := map[string][]int{}
	owners := map[string]group{}
	for i, k := range keys {
		owner, rerr := m.to.Route(k)
		if rerr != nil {
			return 0, errtext.Errorf("shardis: routing %q: %w", k, rerr)
		}
		asking := false
		if cluster.Slot(k) == r.Slot && owner.Addr == dst.Addr {
			owner, asking = shard.Node{Name: r.Addr, Addr: r.Addr}, ask
		}
		at := owner.Addr
		if asking {
			at = "ASK " + at
		}
		groups[at] = append(groups[at], i)
		owners[at] = group{owner, asking}
	}
	moved := 0
	for _, addr := range sortedKeys(groups) {
		idx := groups[addr]
		ks := make([]string, len(idx))
		var ss []int64
		if len(sizes) == len(keys) {
			ss = make([]int64, len(idx))
		}
		for j, i := range idx {
			ks[j] = keys[i]
			if ss != nil {
				ss[j] = sizes[i]
			}
		}
		g := owners[addr]
		n, err := move(g.to, ks, ss, hop+1, g.asking)
		moved += n
		if err != nil {
			return moved, err
		}
	}
	return moved, nil
}
