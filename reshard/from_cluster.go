package reshard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

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

// maxMoveRedirects bounds the MOVED and ASK redirects a batch of keys
// follows from the old node it was found on (followMoved), and the
// TRYAGAIN answers a key meets (tryAgain): a cluster client's default.
const maxMoveRedirects = shard.DefaultMaxRedirects

// oldMoved reports whether err is a MOVED or an ASK with which a master
// of the old topology, a cluster, refused a command on keys (queued in
// migrateCounted's transaction: then nothing ran). MOVED: the keys' slot
// moved to another master since the mover read the cluster's map. ASK:
// the slot is being moved inside the cluster (MIGRATING at src,
// IMPORTING at the master named), and the keys have left for the
// importing master, which takes them after ASKING.
func (m *mover) oldMoved(err error) bool {
	var re redis.Error
	if !m.fromCluster() || !errors.As(err, &re) {
		return false
	}
	switch cluster.ErrorCode(string(re)) {
	case "MOVED", "ASK":
		return true
	}
	return false
}

// oldTryAgain reports whether err is the TRYAGAIN with which a master of
// the old cluster refused a command on several keys of a slot being
// moved inside it: some of the keys are at the slot's migrating master,
// the others at the importing one. Nothing ran; the keys are moved one
// by one, each from where it is (a command on one key is never refused
// so).
func (m *mover) oldTryAgain(err error) bool {
	var re redis.Error
	return m.fromCluster() && errors.As(err, &re) && cluster.ErrorCode(string(re)) == "TRYAGAIN"
}

// tryAgain waits before the attempt-th try of a command that a master of
// the old cluster refused with TRYAGAIN (err) as src's command cmd
// (doing what), a little longer each time, or fails with a
// *shard.RetryError (shard.ErrRetryBudget) past maxMoveRedirects
// attempts: the key was neither moved nor deleted.
func (m *mover) tryAgain(ctx context.Context, src, dst shard.Node, cmd, what string, err error, attempt int) error {
	if attempt >= maxMoveRedirects {
		return m.migrateErr(src, dst, what,
			&shard.RetryError{Command: cmd, Attempts: attempt + 1, Last: err.Error() + " (the slot stays half moved)", Err: err})
	}
	t := time.NewTimer(time.Duration(attempt+1) * 20 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("shardis: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

// followMoved moves keys, which old node src refused with the MOVED or
// ASK err (oldMoved) to the command cmd (what says what it was doing,
// for the error), from the master the redirect names, as a cluster
// client follows a redirect: the slot and its keys went there (MOVED),
// or the keys did while the slot is being moved (ASK). then moves them
// from there (conn, at; asking: each command on the keys there must
// follow an ASKING), after hop+1 redirects; followMoved returns how many
// it moved. Past maxMoveRedirects hops the batch fails with a
// *shard.RetryError (shard.ErrRetryBudget) and nothing more of it moves.
func (m *mover) followMoved(ctx context.Context, src, dst shard.Node, cmd, what string, err error, hop int,
	then func(conn redis.Conn, at shard.Node, hop int, asking bool) (int, error)) (int, error) {
	at, asking, err := m.movedTo(src, dst, cmd, what, err, hop)
	if err != nil {
		return 0, err
	}
	conn, err := m.pools.Get(ctx, at.Addr)
	if err != nil {
		return 0, &shard.NodeError{Node: at, Err: err}
	}
	defer conn.Close()
	return then(conn, at, hop+1, asking)
}

// movedTo returns the master that the MOVED or ASK err, with which old
// node src refused the command cmd (doing what) after hop redirects,
// names, and whether it was an ASK; past maxMoveRedirects hops a
// *shard.RetryError, and for an error that is no redirect that error,
// as the error of what.
func (m *mover) movedTo(src, dst shard.Node, cmd, what string, err error, hop int) (shard.Node, bool, error) {
	var re redis.Error
	errors.As(err, &re)
	r, ok := cluster.ParseRedirect(string(re), src.Addr)
	if !ok {
		return shard.Node{}, false, m.migrateErr(src, dst, what, err)
	}
	if hop >= maxMoveRedirects {
		return shard.Node{}, false, m.migrateErr(src, dst, what,
			&shard.RetryError{Command: cmd, Attempts: hop + 1, Last: string(re) + " (too many redirects)", Err: err})
	}
	return shard.Node{Name: r.Addr, Addr: r.Addr}, r.Kind == cluster.Ask, nil
}

// redirectKey names the node and the kind of the redirect err (MOVED or
// ASK, from old node src), to group keys by: an ASK and a MOVED to one
// master are followed apart.
func redirectKey(src shard.Node, err error) string {
	var re redis.Error
	errors.As(err, &re)
	r, _ := cluster.ParseRedirect(string(re), src.Addr)
	if r.Kind == cluster.Ask {
		return "ask " + r.Addr
	}
	return r.Addr
}

// sendAsking sends ASKING on conn first when asking: the command sent
// next is on keys that left for the master conn reaches, which imports
// their slot and takes commands on them only after ASKING.
func sendAsking(conn redis.Conn, asking bool) error {
	if !asking {
		return nil
	}
	return conn.Send("ASKING")
}

// receiveAsked reads the reply of a command sent after sendAsking, with
// receive: the ASKING's reply first when asking, whose error, if any,
// wins.
func receiveAsked(conn redis.Conn, asking bool, receive func(redis.Conn) (any, error)) (any, error) {
	if !asking {
		return receive(conn)
	}
	_, aerr := receive(conn)
	v, err := receive(conn)
	if aerr != nil {
		return nil, aerr
	}
	return v, err
}

// fromCluster reports whether the old topology is a cluster.
func (m *mover) fromCluster() bool {
	_, ok := m.from.(*shard.ClusterRouter)
	return ok
}
