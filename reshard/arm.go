package reshard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// ArmOptions tunes Arm.
type ArmOptions struct {
	// AllowUnnamed lets connections that no shardis process named pass
	// the check (see CheckClients).
	AllowUnnamed bool
	// SkipClientCheck arms without looking for processes that route by
	// one topology alone (the beacons' acknowledgements are still awaited).
	SkipClientCheck bool
	// Timeout bounds the wait for every migrating process to acknowledge
	// the fence (its beacons renamed "fenced"); 30 s when zero.
	Timeout time.Duration
	// Addrs maps a new node's address to the one the old nodes reach it
	// at, as Options.Addrs; nil: the Migration.Addrs of To (the
	// processes' config), if any. The probe's MIGRATE uses it.
	Addrs map[string]string
	// SkipProbe arms without first checking that every old node can
	// MIGRATE to the new nodes (see Arm).
	SkipProbe bool
}

// Arm raises the fence of the migration from -> to, after which migrating
// processes move keys on touch (see docs/resharding.md, "The fence"):
//
//  1. CLIENT LIST on every old node must show no process that routes by
//     one topology alone (CheckClients), and every old node must MIGRATE
//     a throwaway key (named in the fence's reserved family,
//     shard.IsFenceKey, expiring on its own, deleted at once) to each new
//     node that keys move to from it, as migrating processes will: the
//     same address (Addrs), credentials, database and timeout. An old
//     node that cannot (TLS-only new nodes without tls-cluster yes on the
//     old ones, an address the old node cannot reach, credentials the new
//     node refuses) stops Arm with a *ProbeError, nothing armed: once
//     armed, every command of those processes on a key that has not
//     moved yet would fail with a *shard.MigrateError;
//  2. the marker shard.FenceKey is set to "fenced" on every old node:
//     migrating processes route by the new topology, and commands on keys
//     that move wait;
//  3. Arm waits until every beacon of the migration on every old node is
//     named "fenced" (or "armed") — each process has finished the commands
//     it routed by the old topology — and checks the clients again;
//  4. the marker is set to "armed" on every old node: processes move keys.
//
// Arm is idempotent: run on an armed migration it returns nil at once.
// Move calls it before moving. While a Move of the same migration runs
// (it arms by itself), Arm refuses with a *ClientsError matching
// ErrMoverAlreadyRunning that names the mover's connections, and a Move
// started while Arm runs refuses likewise: beside a mover's end, an arm
// could set the marker again after the mover had cleared it, or make it
// keep the fence, taking the arm for a process still on the migration.
func Arm(ctx context.Context, from, to shard.Config, opts ArmOptions) error {
	return withMigrationAs(ctx, from, to, true, func(pools *pool.Set, info shard.MigrationInfo, c *shard.Client) error {
		if err := noOtherMover(ctx, pools, info, c.InstanceID()); err != nil { // opposite.go
			return err
		}
		return arm(ctx, pools, info, opts, clientsMigrateTo(opts.Addrs, to, c.NodeAddr))
	})
}

// clientsMigrateTo is how migrating processes of the new topology to
// MIGRATE to its nodes: to's pool options and MIGRATE timeout, and addrs,
// or when nil to's Migration.Addrs (the processes' config given as To).
func clientsMigrateTo(addrs map[string]string, to shard.Config, addrOf func(shard.Node) (string, error)) migrateTo {
	if addrs == nil && to.Migration != nil {
		addrs = to.Migration.Addrs
	}
	return migrateTo{addrs: addrs, addrOf: addrOf, pool: to.Pool, timeout: clientMigrateTimeout(to.Pool)}
}

// armPoll is how often Arm reads CLIENT LIST while it waits.
const armPoll = 20 * time.Millisecond

func arm(ctx context.Context, pools *pool.Set, info shard.MigrationInfo, opts ArmOptions, probe migrateTo) error {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if err := checkDistinctServers(ctx, pools, info); err != nil { // servers.go
		return err
	}
	if err := noOppositeMover(ctx, pools, info); err != nil { // opposite.go
		return err
	}
	key := shard.FenceKey(info.FromID, info.ToID)
	phase, err := fencePhase(ctx, pools, info, key)
	if err != nil {
		return err
	}
	if !opts.SkipClientCheck {
		if err := checkClients(ctx, pools, info, opts.AllowUnnamed); err != nil {
			return err
		}
	}
	if phase == shard.PhaseArmed {
		return nil
	}
	if !opts.SkipProbe {
		if err := probeMigrate(ctx, pools, info, probe); err != nil { // probe.go
			return err
		}
	}
	if err := setFence(ctx, pools, info, key, shard.PhaseFenced); err != nil {
		return err
	}
	deadline := time.Now().Add(opts.Timeout)
	fresh := freshConns{} // connections in their handshake (clients.go)
	for {
		entries, err := clientList(ctx, pools, info)
		if err != nil {
			return err
		}
		if !opts.SkipClientCheck {
			if err := judgeClients(entries, info, opts.AllowUnnamed, fresh); err != nil {
				return err // a process joined on the old config: the fence stays "fenced"
			}
		}
		late := unfenced(entries, info)
		if len(late) == 0 && !fresh.pending() {
			break
		}
		if time.Now().After(deadline) {
			return &ClientsError{Conns: late, Headline: fmt.Sprintf("have not acknowledged the fence within %v "+
				"(each process acknowledges once the commands it planned by the old topology have finished); "+
				"the fence stays %q, commands on moving keys wait, until Arm runs again and completes", opts.Timeout, shard.PhaseFenced)}
		}
		select {
		case <-ctx.Done():
			// The marker is up: say so, as the timeout does; "canceled"
			// alone read as nothing done, while the migrating
			// processes' commands on moving keys wait until an Arm
			// completes.
			return fmt.Errorf("shardis: arming the migration: the fence stays %q, commands on moving keys wait, "+
				"until Arm runs again and completes: %w", shard.PhaseFenced, ctx.Err())
		case <-time.After(armPoll):
		}
	}
	return setFence(ctx, pools, info, key, shard.PhaseArmed)
}

// unfenced returns the beacons of the migration that still route by the
// old topology.
func unfenced(entries []clientEntry, info shard.MigrationInfo) []ClientConn {
	var out []ClientConn
	for _, e := range entries {
		cn, ok := shard.ParseClientName(e.name)
		if ok && cn.Migrating && beaconMatches(cn, info) && cn.Phase == shard.PhaseWaiting {
			out = append(out, ClientConn{Node: e.node, ID: e.id, Addr: e.addr, Name: e.name,
				Reason: "has not acknowledged the fence yet"})
		}
	}
	return out
}

// fencePhase returns the furthest phase the marker shows on any old node.
func fencePhase(ctx context.Context, pools *pool.Set, info shard.MigrationInfo, key string) (shard.MigrationPhase, error) {
	best := shard.PhaseWaiting
	for _, n := range info.From.Nodes() {
		reply, at, err := onMarkerOwner(ctx, pools, n, "GET", key) // from_cluster.go
		v, err := redis.String(reply, err)
		if err == redis.ErrNil || markerElsewhere(err) {
			continue
		}
		var ne *shard.NodeError
		if errors.As(err, &ne) {
			return 0, err
		}
		if err != nil {
			return 0, &shard.NodeError{Node: at, Err: err}
		}
		if p, _, ok := shard.ParseFenceValue(v); ok && p > best {
			best = p
		}
	}
	return best, nil
}

// testHookBeforeFenceSet, when set (by tests), runs in setFence before
// the marker is written.
var testHookBeforeFenceSet func()

// setFence sets the marker to phase p on every old node.
func setFence(ctx context.Context, pools *pool.Set, info shard.MigrationInfo, key string, p shard.MigrationPhase) error {
	if testHookBeforeFenceSet != nil {
		testHookBeforeFenceSet()
	}
	v := shard.FenceValue(p, time.Now())
	took := 0
	var last error
	for _, n := range info.From.Nodes() {
		_, at, err := onMarkerOwner(ctx, pools, n, "SET", key, v) // from_cluster.go
		var ne *shard.NodeError
		switch {
		case err == nil:
			took++
		case markerElsewhere(err):
			last = err
		case errors.As(err, &ne):
			return err
		default:
			return fullErr(at, fmt.Sprintf("setting the fence's marker %q to %q", key, p), err)
		}
	}
	if took == 0 {
		if last != nil {
			return unreached(key, last)
		}
		return fmt.Errorf("%w: no old node took the fence's marker %q (a cluster whose slot table changed?)", shard.ErrMigration, key)
	}
	return nil
}

// ClearFence deletes the fence's marker of the migration from -> to on
// every old node, without any check: the forced form of Finish, which
// first makes sure that no process still routes by the migration and that
// every key is at its owner (phase 3 of docs/resharding.md). A process
// started on the migrating config after that waits for a fence again.
func ClearFence(ctx context.Context, from, to shard.Config) error {
	pools, err := pool.NewSet(moverPool(to.Pool))
	if err != nil {
		return errtext.Errorf("%w: %w", shard.ErrBadConfig, err)
	}
	defer pools.Close()
	c, err := routingClient(ctx, from, to, nil)
	if err != nil {
		return err
	}
	defer c.Close()
	info, _ := c.Migration()
	return delFence(ctx, pools, info, shard.FenceKey(info.FromID, info.ToID)) // finish.go
}
