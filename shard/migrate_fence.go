package shard

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// The fence (docs/resharding.md, "The fence"): a migrating client moves no
// key before every process of the deployment runs the migrating config.
// Until then an old-only process may still look for a key at its old
// owner, and a move would hide the key from it (a miss, a fresh counter)
// and later delete what it wrote there (the new owner's copy wins).
//
// A migration goes through three phases, driven by a marker key on every
// old node (FenceKey) that the mover sets (reshard.Arm):
//
//	PhaseWaiting  no marker: route every key by the OLD topology and move
//	              nothing, exactly like an old-only process. The beacons
//	              say "migrating".
//	PhaseFenced   marker "fence": route by the new topology; a command on a
//	              key whose owner changes waits until PhaseArmed. Keys that
//	              stay are served as before. Once the commands routed in
//	              PhaseWaiting have finished, the beacons say "fenced".
//	PhaseArmed    marker "armed": move on touch. The beacons say "armed".
//
// The mover sets "fence" only when CLIENT LIST on every old node shows no
// old-only connection, and "armed" only when every beacon says "fenced"
// (or "armed"): so when any process moves a key, every process routes by
// the new topology and either moves first too or waits.

// MigrationPhase is where a client is in the fence of its migration.
type MigrationPhase int32

const (
	// PhaseWaiting routes by the old topology and moves nothing.
	PhaseWaiting MigrationPhase = iota
	// PhaseFenced routes by the new topology; moves wait for PhaseArmed.
	PhaseFenced
	// PhaseArmed moves each key whose owner changes before its command.
	PhaseArmed
)

// String returns the phase's word in beacon names and markers.
func (p MigrationPhase) String() string {
	switch p {
	case PhaseWaiting:
		return "migrating"
	case PhaseFenced:
		return "fenced"
	case PhaseArmed:
		return "armed"
	}
	return "phase-" + strconv.Itoa(int(p))
}

// FencePoll is how often a client that is not armed yet reads the marker.
const FencePoll = 100 * time.Millisecond

// FenceKey is the marker key of the migration fromID -> toID (TopologyID
// of each side) that the mover sets on every old node. A cluster is named
// "cluster" (processes may name it by different seeds).
func FenceKey(fromID, toID string) string {
	return fencePrefix + fenceName(fromID) + ">" + fenceName(toID)
}

// IsFenceKey reports whether key is a fence's marker (the prefix
// "shardis:migration:" is reserved): the mover, Verify and Scan skip it.
func IsFenceKey(key string) bool {
	return strings.HasPrefix(key, fencePrefix)
}

const fencePrefix = "shardis:migration:"

func fenceName(id string) string {
	if strings.HasPrefix(id, "cluster-") {
		return "cluster"
	}
	return id
}

// FenceValue is the marker's value for phase p (PhaseFenced or
// PhaseArmed), set at time t.
func FenceValue(p MigrationPhase, t time.Time) string {
	return p.String() + " " + strconv.FormatInt(t.UnixMilli(), 10)
}

// ParseFenceValue reads a marker's value; ok is false for anything else.
func ParseFenceValue(v string) (p MigrationPhase, t time.Time, ok bool) {
	word, ms, found := strings.Cut(v, " ")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !found || err != nil {
		return 0, time.Time{}, false
	}
	switch word {
	case "fenced":
		p = PhaseFenced
	case "armed":
		p = PhaseArmed
	default:
		return 0, time.Time{}, false
	}
	return p, time.UnixMilli(n), true
}

// enterWaiting counts an execution that routes by the old topology (the
// fence waits for them before it says "fenced"); it reports whether it
// counted one. The count is taken before the phase is read again, so a
// switch that stores PhaseFenced and then finds the count at zero knows
// that no execution counted before the switch is still running.
func (m *migState) enterWaiting() bool {
	if m.phase.Load() != int32(PhaseWaiting) {
		return false
	}
	m.waiting.Add(1)
	if m.phase.Load() != int32(PhaseWaiting) {
		m.waiting.Add(-1)
		return false
	}
	return true
}

// advance brings the client to phase p (never back). Leaving PhaseWaiting
// switches the routing and then waits for the executions planned by the
// old topology to end (drainOld), so that the beacons the caller renames
// "fenced" promise that none is left. Only the beacon loop (and
// installMigration and ArmMigration) call it.
//
// When ctx ends during that wait, advance returns its error: the phase has
// left PhaseWaiting, but the switch is not complete (m.switched is false)
// and the client is not armed; the beacons do not say "fenced" until a
// later advance has finished the wait. installMigration undoes such a
// migration; the beacon loop's ends only when the beacons close.
func (c *Client) advance(ctx context.Context, m *migState, p MigrationPhase) error {
	m.advMu.Lock()
	defer m.advMu.Unlock()
	cur := MigrationPhase(m.phase.Load())
	if p <= cur && (cur == PhaseWaiting || m.switched.Load()) {
		return nil
	}
	if cur == PhaseWaiting {
		c.publishNext(m) // a cluster is the client's before the phase says so (migrate_cluster.go)
		// The new routing first, then the phase: a planner that finds
		// the phase past PhaseWaiting plans by c.loc, which must show
		// the new topology by then (planFence).
		if m.next != nil {
			c.switchTo(m.next) // a cluster becomes the client's (migrate_cluster.go)
		}
		m.phase.Store(int32(PhaseFenced))
		if m.next == nil {
			// A cluster client: its subscriptions leave the old
			// topology for the cluster its commands go to now
			// (subscription_place.go, waitingFrom).
			c.subs.topo.notify()
		}
	}
	if !m.switched.Load() {
		if err := c.drainOld(ctx, m); err != nil {
			return err
		}
		// Whatever was planned by the old topology and binds only now is
		// late: it fails without being sent (bind).
		if m.prev != nil {
			m.prev.activeCut.cutOff()
		} else if out := c.outCut.Load(); out != nil {
			out.cutOff()
		}
		m.switched.Store(true)
		c.renameConns(ctx) // the connections' names follow the routing (migrate_name.go)
	}
	if p == PhaseArmed && cur != PhaseArmed {
		m.phase.Store(int32(PhaseArmed))
		close(m.armed)
	}
	return nil
}

// InstanceID returns the random name that identifies this client in its
// connection names (ClientName.Instance): the mover uses it to tell its
// own beacons from those of the processes it waits for.
func (c *Client) InstanceID() string { return c.instance }

// ArmMigration arms the client's migration at once, without waiting for
// the fence's marker: it moves keys on touch from now on. Only for a
// process that is alone on the old nodes (a test, a single-process
// deployment) or that knows the fence is armed: in a deployment of many
// processes, run the mover's arming step instead (reshard.Arm).
func (c *Client) ArmMigration() error {
	c.migMu.Lock()
	defer c.migMu.Unlock()
	m := c.mig.Load()
	if m == nil {
		return fmt.Errorf("%w: no migration is on", ErrMigration)
	}
	// Not bounded by a context: it ends once the switch has waited for
	// the commands planned by the old topology (drainOld).
	return c.advance(context.Background(), m, PhaseArmed) // the beacon loop renames the beacons
}

// readFence reads the marker on every old node through conn (a beacon,
// or a pooled connection) and returns the furthest phase any shows.
func readFence(ctx context.Context, conn redis.Conn, key string) MigrationPhase {
	v, err := redis.String(redis.DoContext(conn, ctx, "GET", key))
	if err != nil {
		return PhaseWaiting
	}
	p, _, ok := ParseFenceValue(v)
	if !ok {
		return PhaseWaiting
	}
	return p
}

// end tells the commands waiting at m's fence (waitArmed) that m will
// never be armed: the client left it. They end without being sent.
func (m *migState) end() {
	m.endOnce.Do(func() { close(m.ended) })
}

// waitArmed blocks a command whose key must move until the client is
// armed (PhaseFenced), at most for limit (the client's read timeout: a
// fence that stays up longer, for example because arming was refused,
// fails the command instead of hanging it), or fails it when ctx ends or
// the client leaves m (end).
func (m *migState) waitArmed(ctx context.Context, limit time.Duration) error {
	select {
	case <-m.armed:
		return nil
	default:
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-m.armed:
		return nil
	case <-m.ended:
		return fmt.Errorf("%w: the migration ended (AbortMigration or FinishMigration) before it was armed", ErrMigration)
	case <-t.C:
		return fmt.Errorf("%w: the fence is up but not armed after %v (is the mover arming?)", ErrMigration, limit)
	case <-ctx.Done():
		return fmt.Errorf("%w: waiting for the migration to be armed: %w", ErrMigration, ctx.Err())
	}
}

// fencedLocator routes a cluster client by the old topology while its
// migration waits (PhaseWaiting).
type fencedLocator struct {
	c     *Client
	inner locator
}

func (l fencedLocator) locate(key any) (int, int, error) {
	if m := l.c.mig.Load(); m != nil && m.phase.Load() == int32(PhaseWaiting) && m.fromLoc != nil {
		return m.fromLoc.locate(key)
	}
	return l.inner.locate(key)
}

func (l fencedLocator) groupLabel(group int) string {
	if m := l.c.mig.Load(); m != nil && m.phase.Load() == int32(PhaseWaiting) && m.fromLoc != nil {
		return m.fromLoc.groupLabel(group)
	}
	return l.inner.groupLabel(group)
}

// locatorFor returns a locator for a router's placement, registering its
// nodes with the client. A cluster's keys are grouped by slot, as the
// client's own cluster routing groups them: grouped by node, a multi-key
// command over several slots of one master went out whole and the server
// refused it (CROSSSLOT), and a transaction over them was sent instead of
// being refused with a *CrossShardError.
func (c *Client) locatorFor(r Router) locator {
	if cr, ok := r.(*ClusterRouter); ok {
		return clusterLocator{cr} // its nodes were registered by its table (build)
	}
	if rr, ok := r.(*RingRouter); ok {
		idx := make([]int, len(rr.Nodes()))
		for i, n := range rr.Nodes() {
			idx[i] = c.nodes.add(n)
		}
		return mappedRingLocator{rr: rr, idx: idx}
	}
	return newRouterLocator(r, c.nodes)
}
