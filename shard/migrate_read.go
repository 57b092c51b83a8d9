package shard

import (
	"context"
	"errors"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/shard/command"
)

// Reads are answered where the key is. A read-only command whose keys all
// still sit at one old owner runs there, in a transaction with EXISTS on
// the same keys:
//
//	MULTI; EXISTS k...; <the command>; EXEC
//
// Why that is correct (docs/resharding.md, "Reads are answered where the
// key is"): under the protocol, a key is written at its new owner only
// after a MIGRATE answered OK or NOKEY (the key had left its old owner),
// after the old copy was deleted (BUSYKEY, settleBusy), or by a blind
// overwrite that returns only once it has deleted the old copy
// (migrate_overwrite.go). Nothing puts it back. So while the key exists at
// its old owner, no write has completed at the new one, and the old copy
// holds the latest value (an overwrite in flight has not returned: the
// read is ordered before it): a copy at the new owner can only be one that
// a timed-out MIGRATE restored, identical to it, or one an overwrite in
// flight, or one whose delete failed, wrote. EXISTS and the command run in one transaction, so the value read is
// the one EXISTS saw. The transaction is the point at which the read takes
// effect, inside the caller's call, so the read is linearizable.
//
//   - EXISTS counts every key: the command is answered at the old owner.
//   - EXISTS counts none at the old owner: no key is there, and none will
//     be again; they are noted as moved and the command runs at the new
//     owner.
//   - Some are there, some not, or the transaction failed: the keys are
//     moved first (MIGRATE), as for a write. A read-only command has no
//     effect, so running it again elsewhere is always safe.
//
// The new owner is not asked: a copy there while the old one exists is
// one a timed-out MIGRATE restored, identical to the old one (the next
// write settles it, BUSYKEY). Asking cost a second node per read, which
// halved the throughput of reads of moving keys on a 2-core machine
// (docs/benchmarks.md, "A client during a migration").
//
// A read whose own reply shows whether its key is there (GET, TTL, an
// empty hash, ...) is sent alone, without the transaction
// (migrate_read_alone.go).
//
// Writes still move first: a write at the old owner would be lost to a
// process that has already moved the key.

// oldReads are the read-only calls of one batch that are tried at their
// keys' old owners.
type oldReads struct {
	reads  []oldRead
	served int // calls answered at the old owner
}

// oldRead is one read-only call whose keys all sit at one old owner.
type oldRead struct {
	cl       *call
	keys     []string
	src, dst Node
	srcIdx   int
	multi    [4]*call // MULTI, EXISTS, the command, EXEC: at the old owner
	// alone is the command sent to the old owner by itself, for a command
	// whose reply says whether its key is there (presenceShown).
	alone *call
}

// readableAtOld reports whether cl may be answered at the old owner of
// its keys (pend: every key of cl, none of them moved yet): a read-only
// command that neither blocks nor refuses MULTI nor returns a cursor into
// the key (HSCAN, SSCAN, ZSCAN), with every key at one old
// node (and in one hash slot when that node belongs to a cluster, whose
// transactions take keys of one slot only).
func readableAtOld(m *migState, cl *call, pend []pendingMove) bool {
	if cl.stateful || cl.asking {
		return false
	}
	info := cl.info
	if info.IsContainer() {
		info = info.Resolve(cl.args)
		if info == nil {
			return false
		}
	}
	if !info.IsReadOnly() || info.Flags&(command.Blocking|command.NoMulti|command.PubSub) != 0 {
		return false
	}
	switch info.Name {
	case "hscan", "sscan", "zscan":
		// A cursor is a position in one server's hash table, which
		// depends on that server's hash seed: an iteration begun at the
		// old owner could not go on at the new one. The key moves first,
		// and the whole iteration runs where it will stay.
		return false
	}
	src := pend[0].src.Addr
	for _, pm := range pend[1:] {
		if pm.src.Addr != src {
			return false
		}
	}
	if _, ok := m.from.(*ClusterRouter); ok {
		slot := cluster.Slot(pend[0].key)
		for _, pm := range pend[1:] {
			if cluster.Slot(pm.key) != slot {
				return false
			}
		}
	}
	return true
}

// add notes cl, whose keys are pend, as a read to try at the old owner.
func (rd *oldReads) add(c *Client, m *migState, cl *call, pend []pendingMove, dst Node) {
	keys := make([]string, len(pend))
	for i, pm := range pend {
		keys[i] = pm.key
	}
	rd.reads = append(rd.reads, oldRead{cl: cl, keys: keys, src: pend[0].src, dst: dst, srcIdx: c.srcIndex(m, pend[0].src)})
}

// srcIndex returns the client's node index of an old owner, adding the
// node to the table when the new topology does not have it.
func (c *Client) srcIndex(m *migState, src Node) int {
	if idx, ok := m.src[src.Addr]; ok {
		return idx
	}
	return c.nodes.add(src)
}

// runOldReads sends every read's transaction to its old owner, all old
// owners at once, and settles each read: answered there (served), noted
// as moved (to run at the new owner), or handed to the moves (mv, which it
// returns, created when needed).
func (c *Client) runOldReads(ctx context.Context, m *migState, rd *oldReads, mv *moves) *moves {
	all := make([]*call, 0, 4*len(rd.reads))
	for i := range rd.reads {
		r := &rd.reads[i]
		if mv.holdsAny(r.src, r.dst, r.keys) {
			// Another command of the batch moves one of its keys: the read
			// must see that command's effect when it comes after it, so it
			// runs in the batch's order at the new owner.
			for _, k := range r.keys {
				mv.add(c, m, r.src, r.dst, k, r.cl)
			}
			continue
		}
		if presenceShown(r.cl) {
			r.alone = &call{name: r.cl.name, args: r.cl.args, info: r.cl.info, node: r.srcIdx}
			all = append(all, r.alone)
			continue
		}
		exists := make([]any, len(r.keys))
		for j, k := range r.keys {
			exists[j] = k
		}
		r.multi = [4]*call{
			{name: "MULTI", node: r.srcIdx},
			{name: "EXISTS", args: exists, node: r.srcIdx},
			{name: r.cl.name, args: r.cl.args, node: r.srcIdx},
			{name: "EXEC", node: r.srcIdx},
		}
		all = append(all, r.multi[:]...)
	}
	switch {
	case len(all) == 1 && c.autoPipe:
		// A single read, alone: it shares the old owner's automatic
		// pipeline as any command does.
		c.runSide(ctx, all, c.autoDo)
	case len(all) == 4 && c.autoPipe && all[0].name == "MULTI":
		// A single read, as a caller's Do sends it: concurrent callers'
		// transactions on the old owner share its automatic pipeline.
		c.runSide(ctx, all, c.autoDoTx)
	case len(all) > 0:
		c.runSide(ctx, all, c.runPooled)
	}
	for i := range rd.reads {
		r := &rd.reads[i]
		if r.alone != nil {
			mv = c.settleAlone(m, rd, r, mv)
			continue
		}
		if r.multi[3] == nil {
			continue // moves with the batch's other commands on its keys
		}
		if err := refusedRead(r.multi[2], r.multi[3]); err != nil {
			// The server would not queue the command itself: its
			// refusal is the answer, which moving the keys and running
			// it at the new owner would only pay a MIGRATE for, or
			// replace with the refusal of that MIGRATE.
			rd.serve(m, r, nil, err)
			continue
		}
		switch n, reply, err := execReply(r.multi[3]); {
		case movedAtOld(m, r.multi[1].err):
			// The slot moved inside the old cluster: the redirect is
			// followed (migrate_cluster_moved.go), nothing moved here.
			failMoved(r, r.multi[1].err)
		case n == len(r.keys):
			rd.serve(m, r, reply, err)
		case n == 0:
			for _, k := range r.keys {
				m.moved.add(k)
			}
		default: // some keys there, some not; or no answer
			if mv == nil {
				mv = new(moves)
			}
			for _, k := range r.keys {
				mv.add(c, m, r.src, r.dst, k, r.cl)
			}
		}
	}
	return mv
}

// serve gives r's call its answer from the old owner: reply and err.
func (rd *oldReads) serve(m *migState, r *oldRead, reply any, err error) {
	r.cl.reply, r.cl.err = reply, err
	r.cl.served, r.cl.done = true, true
	r.cl.node = r.srcIdx // the node that answered (Op.Node)
	rd.served++
	m.oldReads.Add(1)
}

// holdsAny reports whether the moves of pair (src, dst) include one of
// keys. A nil mv holds none.
func (mv *moves) holdsAny(src, dst Node, keys []string) bool {
	if mv == nil {
		return false
	}
	for i := range mv.pairs {
		p := &mv.pairs[i]
		if p.src.Addr != src.Addr || p.dst.Addr != dst.Addr {
			continue
		}
		for _, k := range keys {
			if p.has(k) {
				return true
			}
		}
	}
	return false
}

// refusedRead returns the refusal of an old-owner read's command (read),
// or nil, when the server would not queue it for want of permission (NOPERM: an
// ACL without the command or its keys), so that EXEC answered EXECABORT:
// the answer the caller gets at any owner of the keys. A command refused
// for the node's state (MOVED, LOADING, ...) is no such answer.
func refusedRead(read, exec *call) error {
	var re redis.Error
	if !errors.As(exec.err, &re) || !strings.HasPrefix(string(re), "EXECABORT") {
		return nil
	}
	if !errors.As(read.err, &re) || !strings.HasPrefix(string(re), "NOPERM") {
		return nil
	}
	return read.err
}

// execReply reads the EXEC of an old-owner read: the EXISTS count and the
// command's reply or error. n is -1 when the transaction gave no usable
// answer.
func execReply(exec *call) (n int, reply any, err error) {
	if exec.err != nil {
		return -1, nil, nil
	}
	vs, ok := exec.reply.([]any)
	if !ok || len(vs) != 2 {
		return -1, nil, nil
	}
	count, ok := vs[0].(int64)
	if !ok {
		return -1, nil, nil
	}
	if e, isErr := vs[1].(redis.Error); isErr {
		return int(count), nil, e
	}
	return int(count), vs[1], nil
}

// unserved returns the calls that were not answered at an old owner. The
// batch's operation (hooks) stays with the first call that is still sent.
func unserved(calls []*call) []*call {
	out := make([]*call, 0, len(calls))
	var op *Op
	for _, cl := range calls {
		if cl.served {
			if op == nil {
				op = cl.op
			}
			continue
		}
		out = append(out, cl)
	}
	if op != nil && len(out) > 0 && out[0].op == nil {
		out[0].op = op
	}
	return out
}
