package reshard

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// markerElsewhere reports a cluster node's redirect for the fence's
// marker. When the old topology is a Redis Cluster (a migration out of a
// cluster, such as the rollback of one into it), the marker is a key like
// any other: only the master of its slot takes it, and the others answer
// MOVED. Clients read the marker on every old node and take the furthest
// phase any shows, so the slot's master is enough; the others are skipped.
func markerElsewhere(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	switch cluster.ErrorCode(string(re)) {
	case "MOVED", "ASK":
		return true
	}
	return false
}

// ErrFenceUnreached is matched (errors.Is) when no node of the old
// topology, a cluster, served the fence's marker: every node listed, and
// the nodes their redirects named, answered MOVED or ASK (the slot table
// changed under the mover: a failover, a slot moved to a master it did
// not list). The marker was not changed; the error names its slot and the
// last node a redirect named. Run the command again.
var ErrFenceUnreached = fmt.Errorf("%w: no old node served the fence's marker", shard.ErrMigration)

// maxMarkerRedirects bounds the redirects followed from one old node to
// the master of the marker's slot.
const maxMarkerRedirects = 5

// onMarkerOwner runs the command args on the fence's marker at old node
// n and, when it answers MOVED or ASK, at the node named (after ASKING
// for ASK), at most maxMarkerRedirects times: the list of a cluster's
// masters the mover holds may be stale, and the marker's slot served by
// a master it lacks. It returns the reply, or the last redirect (an
// error for which markerElsewhere holds) when the bound was reached, and
// the node that answered (n, or the last node a redirect named), which
// an error of that reply is about.
func onMarkerOwner(ctx context.Context, pools *pool.Set, n shard.Node, args ...any) (any, shard.Node, error) {
	at, asking := n, false
	for hop := 0; ; hop++ {
		conn, err := pools.Get(ctx, at.Addr)
		if err != nil {
			return nil, at, &shard.NodeError{Node: at, Err: err}
		}
		if asking {
			_, err = redis.DoContext(conn, ctx, "ASKING")
		}
		var v any
		if err == nil {
			v, err = redis.DoContext(conn, ctx, args[0].(string), args[1:]...)
		}
		conn.Close()
		var re redis.Error
		if err == nil || !errors.As(err, &re) || hop == maxMarkerRedirects {
			return v, at, err
		}
		r, ok := cluster.ParseRedirect(string(re), at.Addr)
		if !ok {
			return v, at, err
		}
		at, asking = shard.Node{Name: r.Addr, Addr: r.Addr}, r.Kind == cluster.Ask
	}
}

// unreached is ErrFenceUnreached for key, naming the redirect err.
func unreached(key string, err error) error {
	var re redis.Error
	if errors.As(err, &re) {
		if r, ok := cluster.ParseRedirect(string(re), ""); ok {
			return fmt.Errorf("%w: %q (slot %d): the last redirect named %s", ErrFenceUnreached, key, r.Slot, r.Addr)
		}
	}
	return fmt.Errorf("%w: %q (slot %d): %w", ErrFenceUnreached, key, cluster.Slot(key), err)
}

// batchOf names the batch that key k joins on its way to owner: keys
// that go to the same node travel in one MIGRATE ... KEYS, but a cluster
// node (the old topology is a cluster) takes only keys of one slot in it
// (CROSSSLOT otherwise). DUMP/RESTORE moves (Options.Dump) send one
// command per key and keep whole batches.
func (m *mover) batchOf(owner shard.Node, k string) string {
	if _, ok := m.from.(*shard.ClusterRouter); !ok || m.opts.Dump {
		return owner.Addr
	}
	return owner.Addr + "#" + strconv.Itoa(cluster.Slot(k))
}

// maxMoveRedirects bounds the MOVED redirects a batch of keys follows
// from the old node it was found on (followMoved).
const maxMoveRedirects = 5

// oldMoved reports whether err is a MOVED with which a master of the old
// topology, a cluster, refused a MIGRATE queued in its transaction
// (migrateCounted): the keys' slot moved to another master since the
// mover read the cluster's map, and nothing ran.
func (m *mover) oldMoved(err error) bool {
	var re redis.Error
	return m.fromCluster() && errors.As(err, &re) && cluster.ErrorCode(string(re)) == "MOVED"
}

// followMoved moves keys, which old node src refused with the MOVED err
// (oldMoved) to the command cmd (what says what it was doing, for the
// error), from the master the redirect names, as a cluster client
// follows a MOVED: the slot and its keys went there while the mover
// scanned. then moves them from there (conn, at), after hop+1 redirects;
// followMoved returns how many it moved. Past maxMoveRedirects hops the batch fails with a
// *shard.RetryError (shard.ErrRetryBudget) and nothing more of it moves.
func (m *mover) followMoved(ctx context.Context, src, dst shard.Node, cmd, what string, err error, hop int,
	then func(conn redis.Conn, at shard.Node, hop int) (int, error)) (int, error) {
	at, err := m.movedTo(src, dst, cmd, what, err, hop)
	if err != nil {
		return 0, err
	}
	conn, err := m.pools.Get(ctx, at.Addr)
	if err != nil {
		return 0, &shard.NodeError{Node: at, Err: err}
	}
	defer conn.Close()
	return then(conn, at, hop+1)
}

// movedTo returns the master that the MOVED err, with which old node src
// refused the command cmd (doing what) after hop redirects, names; past
// maxMoveRedirects hops a *shard.RetryError, and for an error that is no
// MOVED that error, as the error of what.
func (m *mover) movedTo(src, dst shard.Node, cmd, what string, err error, hop int) (shard.Node, error) {
	var re redis.Error
	errors.As(err, &re)
	r, ok := cluster.ParseRedirect(string(re), src.Addr)
	if !ok || r.Kind != cluster.Moved {
		return shard.Node{}, m.migrateErr(src, dst, what, err)
	}
	if hop >= maxMoveRedirects {
		return shard.Node{}, m.migrateErr(src, dst, what,
			&shard.RetryError{Command: cmd, Attempts: hop + 1, Last: string(re) + " (too many redirects)", Err: err})
	}
	return shard.Node{Name: r.Addr, Addr: r.Addr}, nil
}

// fromCluster reports whether the old topology is a cluster.
func (m *mover) fromCluster() bool {
	_, ok := m.from.(*shard.ClusterRouter)
	return ok
}
