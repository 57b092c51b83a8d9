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

// targetErrPrefix begins the error of a MIGRATE whose target refused a
// key; the target's own error follows it.
const targetErrPrefix = "ERR Target instance replied with error: "

// newMoved returns the MOVED with which new node dst, a master of the
// cluster keys move into, refused a key of the move that failed with err
// (MIGRATE's target error, or a RESTORE's own), and whether it was one.
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
	r, ok := cluster.ParseRedirect(msg, dst.Addr)
	return r, ok && r.Kind == cluster.Moved
}

// newMaxRedirects is how many MOVED replies of the new cluster one run
// of keys follows: the new cluster's MaxRedirects.
func (m *mover) newMaxRedirects() int {
	if n := m.opts.To.Cluster.MaxRedirects; n > 0 {
		return n
	}
	return maxMoveRedirects // the cluster's default too
}

// followNewMoved moves keys (of sizes bytes each) from src again, after
// new node dst refused some with the MOVED r (err: the run's error) at
// hop: the cluster's map is read again, and the keys are grouped by the
// master it names, the slot of r's at r's master at the least, and moved
// there (move, at hop+1). It returns how many moved.
func (m *mover) followNewMoved(ctx context.Context, src, dst shard.Node, keys []string, sizes []int64, r cluster.Redirect, err error, hop int,
	move func(dst shard.Node, keys []string, sizes []int64, hop int) (int, error)) (int, error) {
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
	if m.refreshTo != nil {
		// Best effort: the MOVED itself says where its slot's keys go;
		// the map read again routes the later keys of that slot there too.
		_ = m.refreshTo(ctx)
	}
	groups := map[string][]int{}
	owners := map[string]shard.Node{}
	for i, k := range keys {
		owner, rerr := m.to.Route(k)
		if rerr != nil {
			return 0, errtext.Errorf("shardis: routing %q: %w", k, rerr)
		}
		if cluster.Slot(k) == r.Slot && owner.Addr == dst.Addr {
			owner = shard.Node{Name: r.Addr, Addr: r.Addr}
		}
		groups[owner.Addr] = append(groups[owner.Addr], i)
		owners[owner.Addr] = owner
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
		n, err := move(owners[addr], ks, ss, hop+1)
		moved += n
		if err != nil {
			return moved, err
		}
	}
	return moved, nil
}
