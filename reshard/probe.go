package reshard

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// ErrMigrateProbe is matched (errors.Is) by every *ProbeError.
var ErrMigrateProbe = errors.New("shardis: an old node cannot MIGRATE to a new node")

// ProbeError reports an old node whose MIGRATE of a throwaway key to a
// new node failed, sent as migrating processes send theirs (the same
// address, credentials, database and timeout): Arm, and Move, which arms,
// refuse to arm the fence, since once armed every command of a migrating
// process on a key that still has to go from From to To would fail with
// a *shard.MigrateError until the mover reached that key. Nothing is
// armed: processes keep routing by the old topology.
type ProbeError struct {
	From, To shard.Node // the old node and the new node
	// Target is the address the old node's MIGRATE dialed (after
	// Options.Addrs or ArmOptions.Addrs).
	Target string
	// Err is the old node's reply to the MIGRATE (no password in it).
	Err error
}

// Error implements error.
func (e *ProbeError) Error() string {
	if aclRefusal(e.Err) {
		// Neither the way between the nodes nor TLS is in question.
		return fmt.Sprintf("shardis: not armed: old node %s cannot MIGRATE to new node %s at %s, as migrating processes will "+
			"(every command of theirs on a key that has not moved yet would fail): %v%s",
			e.From, e.To, e.Target, e.Err, permissionHint)
	}
	return fmt.Sprintf("shardis: not armed: old node %s cannot MIGRATE to new node %s at %s, as migrating processes will "+
		"(every command of theirs on a key that has not moved yet would fail): %v; check that the old node reaches that address "+
		"(address translation: Options.Addrs or ArmOptions.Addrs, migration.addrs of the processes' config; a firewall), "+
		"that the new node accepts the new topology's credentials (AUTH/AUTH2), and, for new nodes that accept TLS only, "+
		"that the old nodes run with tls-cluster yes and trust the new nodes' certificates (docs/resharding.md, TLS between servers)",
		e.From, e.To, e.Target, e.Err)
}

// Unwrap returns the old node's reply.
func (e *ProbeError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrMigrateProbe) true, and errors.Is(err,
// ErrPermission) when the old node's reply is an ACL refusal (of the
// MIGRATE, or the new node's of its RESTORE).
func (e *ProbeError) Is(target error) bool {
	return target == ErrMigrateProbe || target == ErrPermission && aclRefusal(e.Err)
}

// probePrefix names the throwaway keys of the probe. It lies in the
// fence's reserved family (shard.IsFenceKey): the mover, Verify and a
// migrating client's Scan skip such a key, and an ACL that lets the
// processes read the fence's marker lets the mover write it.
const probePrefix = "shardis:migration:probe:"

// probeTries bounds the names tried to find, for each pair of an old
// node and a new node that keys move between, one that moves so: a pair
// that a 4,096th of the keys or more move between is missed less than
// once in ten million arms. A cluster on either side is probed slot by
// slot instead (slotTags).
const probeTries = 1 << 16

// slotTags holds, for each hash slot of a cluster, a hash tag whose key
// falls in it (computed once).
var slotTags = sync.OnceValue(func() []string {
	tags := make([]string, cluster.SlotCount)
	left := cluster.SlotCount
	for i := 0; left > 0; i++ {
		t := strconv.Itoa(i)
		if s := cluster.Slot("{" + t + "}"); tags[s] == "" {
			tags[s] = t
			left--
		}
	}
	return tags
})

// clientMigrateTimeout is the timeout of a migrating process's MIGRATE
// under pool options p: half its read timeout, at least 100 ms
// (shard.Client's migrateArgs).
func clientMigrateTimeout(p pool.Options) time.Duration {
	rt := p.ReadTimeout
	if rt == 0 {
		rt = pool.DefaultReadTimeout
	}
	return max(rt/2, 100*time.Millisecond)
}

// probeMigrate checks that every old node can MIGRATE to every new node
// that keys move to from it, as the processes will, before the fence
// flips them into moving keys (arm). For each such pair it sets a
// throwaway key of probePrefix on the old node, expiring on its own,
// MIGRATEs it there with COPY and deletes it on both nodes. The first
// MIGRATE that fails is returned as a *ProbeError.
func probeMigrate(ctx context.Context, pools *pool.Set, info shard.MigrationInfo, t migrateTo) error {
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return fmt.Errorf("shardis: naming the probe key: %w", err)
	}
	prefix := probePrefix + hex.EncodeToString(id[:]) + ":"
	pairs := probePairs(info, prefix)
	for _, p := range pairs {
		if err := probePair(ctx, pools, t, p); err != nil {
			return err
		}
	}
	return nil
}

// probeTarget is a pair of an old node and a new node, and a key that
// moves from the one to the other.
type probeTarget struct {
	src, dst shard.Node
	key      string
}

// probePairs returns, in the order found, a key of prefix for each pair
// of an old node and a new node (distinct addresses) that some key moves
// between: among one key per hash slot when either topology is a
// cluster, and probeTries keys otherwise; a pair that none of them meets
// is left out.
func probePairs(info shard.MigrationInfo, prefix string) []probeTarget {
	olds, news := info.From.Nodes(), info.To.Nodes()
	want := 0
	for _, o := range olds {
		for _, n := range news {
			if o.Addr != n.Addr {
				want++
			}
		}
	}
	// The pairs are found by routing plain names, as user keys are
	// routed, not the probe keys' own names: a ring's tag rule may cut
	// every name of the reserved family down to one tag (under the pair
	// rule "::" all of them hash "migration"), and those names would then
	// meet a single pair. A probe key only has to sit on its old node,
	// which a plain server takes whatever its name, and, on a cluster, in
	// a slot of that node: its name then holds the same {tag} as the name
	// routed, so the two share a slot.
	route := func(i int) string { return strconv.Itoa(i) }
	key := func(i int) string { return prefix + strconv.Itoa(i) }
	tries := probeTries
	_, fromCluster := info.From.(*shard.ClusterRouter)
	_, toCluster := info.To.(*shard.ClusterRouter)
	if fromCluster || toCluster {
		tags := slotTags()
		route = func(i int) string { return "{" + tags[i] + "}" }
		key = func(i int) string { return prefix + "{" + tags[i] + "}" }
		tries = len(tags)
	}
	seen := map[[2]string]bool{}
	var out []probeTarget
	for i := 0; i < tries && len(out) < want; i++ {
		r := route(i)
		src, err := info.From.Route(r)
		if err != nil {
			continue
		}
		dst, err := info.To.Route(r)
		if err != nil || src.Addr == dst.Addr || seen[[2]string{src.Addr, dst.Addr}] {
			continue
		}
		seen[[2]string{src.Addr, dst.Addr}] = true
		out = append(out, probeTarget{src: src, dst: dst, key: key(i)})
	}
	return out
}

// probePair MIGRATEs p.key from p.src to p.dst with COPY, after setting it
// on p.src with an expiry (a mover killed meanwhile leaves at most keys
// that expire), and deletes it on both nodes.
func probePair(ctx context.Context, pools *pool.Set, t migrateTo, p probeTarget) error {
	args, err := t.args(p.dst, true, []string{p.key})
	if err != nil {
		return &shard.NodeError{Node: p.dst, Err: err}
	}
	target, _ := t.target(p.dst)
	// MIGRATE's timeout bounds each of its steps (connection, AUTH,
	// SELECT, RESTORE): the key outlives them all, and the mover waits
	// for them all.
	ttl := max(30*time.Second, 8*t.timeout)
	wait := 5*t.timeout + time.Second
	conn, abort, err := pools.GetAbortable(ctx, p.src.Addr, false)
	if err != nil {
		return &shard.NodeError{Node: p.src, Err: err}
	}
	defer conn.Close()
	defer probeCleanup(ctx, pools, p)
	if _, err := redis.DoContext(conn, ctx, "SET", p.key, "1", "PX", ttl.Milliseconds()); err != nil {
		return fullErr(p.src, fmt.Sprintf("setting the probe key %q", p.key), err)
	}
	// The MIGRATE is waited for wait, which is longer than the pool's
	// read timeout that bounds a DoContext (a MIGRATE whose every step
	// is in time may take several timeouts), within ctx: its end cuts
	// the wait short.
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, max(time.Until(dl), time.Nanosecond))
	}
	stop := context.AfterFunc(ctx, abort)
	reply, err := redis.DoWithTimeout(conn, wait, "MIGRATE", args...)
	stop()
	var re redis.Error
	switch {
	case errors.As(err, &re):
		return &ProbeError{From: p.src, To: p.dst, Target: target, Err: hidePassword(re, t.pool.Password)}
	case err != nil:
		if ctx.Err() != nil {
			return fmt.Errorf("shardis: probing MIGRATE from %s to %s: %w", p.src, p.dst, ctx.Err())
		}
		// MIGRATE answers IOERR once its timeout passes at any of its
		// steps: an old node that does not answer at all is hung or
		// unreachable itself, which says nothing of its way to dst.
		return &shard.NodeError{Node: p.src, Err: fmt.Errorf("no reply to a MIGRATE probing the way to %s within %v: %w", p.dst, wait, err)}
	case isNoKey(reply):
		return &ProbeError{From: p.src, To: p.dst, Target: target,
			Err: errors.New("NOKEY: the probe key was gone before its MIGRATE (evicted?)")}
	}
	return nil
}

// probeCleanup deletes the probe key on both nodes, also once ctx has
// ended; what it cannot delete expires.
func probeCleanup(ctx context.Context, pools *pool.Set, p probeTarget) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, n := range []shard.Node{p.src, p.dst} {
		conn, err := pools.Get(ctx, n.Addr)
		if err != nil {
			continue
		}
		redis.DoContext(conn, ctx, "DEL", p.key)
		conn.Close()
	}
}
