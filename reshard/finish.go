package reshard

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// Finish ends the migration from -> to (step 3 of docs/resharding.md) by
// deleting the fence's marker from every old node, once that is safe:
//
//  1. no process still routes by the migration: CLIENT LIST on every old
//     node shows no beacon of from -> to, in any phase (each process runs
//     the plain config of to, or called FinishMigration);
//  2. every key sits at its owner in to (a verification pass over the
//     nodes of both topologies, as at the end of Move).
//
// Otherwise it deletes nothing and returns a *ClientsError naming each
// connection that still uses the migration (errors.Is ErrStillMigrating),
// or an error wrapping ErrMisplaced. A beacon that appears while the
// markers are being deleted (a process started on the migrating config
// meanwhile) puts them back as armed, and Finish fails naming it. The
// returned report is the verification's (nil when it did not run).
// ClearFence deletes the markers without these checks.
func Finish(ctx context.Context, from, to shard.Config) (*VerifyReport, error) {
	var rep *VerifyReport
	err := withMigration(ctx, from, to, func(pools *pool.Set, info shard.MigrationInfo, self string) error {
		var err error
		rep, err = finish(ctx, pools, info, self, true)
		return err
	})
	return rep, err
}

// ErrStillMigrating is matched (errors.Is) by the *ClientsError of Finish:
// processes still route by the migration, so its fence must stay.
var ErrStillMigrating = fmt.Errorf("%w: processes still route by the migration", ErrClients)

// finish is Finish with the mover's pools; verify false skips the
// verification (Move has just made one).
func finish(ctx context.Context, pools *pool.Set, info shard.MigrationInfo, self string, verify bool) (*VerifyReport, error) {
	key := shard.FenceKey(info.FromID, info.ToID)
	if err := stillMigrating(ctx, pools, info, self); err != nil {
		var ce *ClientsError
		if errors.As(err, &ce) {
			// Nothing was deleted: say what there is of the fence, which
			// may be nothing (never armed, or cleared by ClearFence).
			ce.Headline = "still use the migration; " + fenceLeft(ctx, pools, info, key)
		}
		return nil, err
	}
	var rep *VerifyReport
	if verify {
		olds := info.From.Nodes()
		v, err := verifyNodes(ctx, pools, info.To, appendNodes(info.To.Nodes(), olds), nil, info.From, 0, nil)
		if err != nil {
			return nil, err
		}
		rep = v
	}
	if rep != nil && rep.Misplaced > 0 {
		return rep, fmt.Errorf("%w; %s", misplacedErr(rep), fenceLeft(ctx, pools, info, key))
	}
	if err := delFence(ctx, pools, info, key); err != nil {
		return rep, err
	}
	if testHookFenceDeleted != nil {
		testHookFenceDeleted()
	}
	if err := stillMigrating(ctx, pools, info, self); err != nil {
		// A process joined the migration while the markers went away:
		// it must not wait behind a fence that is gone while others
		// have moved keys. Put them back; it arms on its next poll.
		var ce *ClientsError
		isClients := errors.As(err, &ce)
		if serr := setFence(ctx, pools, info, key, shard.PhaseArmed); serr != nil {
			if isClients {
				ce.Headline = "joined the migration while its fence was cleared; no fence is up any more: putting it back failed"
			}
			return rep, errtext.Errorf("%w (putting the fence back failed: %w)", err, serr)
		}
		if isClients {
			ce.Headline = "joined the migration while its fence was cleared; the fence is armed again"
		}
		return rep, err
	}
	return rep, nil
}

// testHookFenceDeleted, when set (by tests), runs in Finish once the
// markers are deleted, before it looks for processes that joined the
// migration meanwhile.
var testHookFenceDeleted func()

// testHookBeforeFenceDelete, when set (by tests), runs in Finish and
// ClearFence once the old nodes are listed, before the markers are deleted.
var testHookBeforeFenceDelete func()

// fenceLeft says what Finish, refusing before it deleted anything, leaves
// of the fence: "the fence stays" when an old node holds its marker, that
// there is none when no old node does (the migration was never armed, or
// its fence was cleared), and that it is left as it was when a marker
// could not be read.
func fenceLeft(ctx context.Context, pools *pool.Set, info shard.MigrationInfo, key string) string {
	p, err := fencePhase(ctx, pools, info, key)
	switch {
	case err != nil:
		return "the fence is left as it was"
	case p == shard.PhaseWaiting:
		return "no fence is up (the migration was never armed, or its fence was cleared)"
	}
	return "the fence stays"
}

// stillMigrating reports, as a *ClientsError matching ErrStillMigrating,
// the beacons on the old nodes of processes that still route by the
// migration; self is the instance of the mover's own routing client.
// Pooled connections are not judged: the marker means nothing to a
// process that is not migrating, whichever topology it routes by (its
// connections are named after it, renamed at run time as it changes:
// shard.AutoClientName).
func stillMigrating(ctx context.Context, pools *pool.Set, info shard.MigrationInfo, self string) error {
	entries, err := clientList(ctx, pools, info)
	if err != nil {
		return err
	}
	// The routing clients of Moves of this migration still running keep
	// beacons too (opposite.go names their connections).
	movers := map[string]bool{}
	for _, e := range entries {
		if _, _, inst, ok := parseMoverName(e.name); ok && inst != "" && sameMover(e.name, info, self) {
			movers[inst] = true
		}
	}
	var bad []ClientConn
	for _, e := range entries {
		if e.ignorable() {
			continue
		}
		cn, ok := shard.ParseClientName(e.name)
		if !ok || cn.Instance == self {
			continue // cannot be told (the check before the move judged them), or the mover's own
		}
		cc := ClientConn{Node: e.node, ID: e.id, Addr: e.addr, Name: e.name}
		if !cn.Migrating || !beaconMatches(cn, info) {
			continue
		}
		cc.Reason = fmt.Sprintf("still routes by the migration (phase %s): give it the plain config of the new topology, or call FinishMigration", cn.Phase)
		if movers[cn.Instance] {
			cc.Reason = "a mover of this migration (shardis reshard), still running: let it end"
		}
		bad = append(bad, cc)
	}
	if len(bad) > 0 {
		return &ClientsError{Conns: bad, Headline: "still use the migration", err: ErrStillMigrating}
	}
	return nil
}

// delFence deletes the marker on every old node. On a cluster only the
// master of its slot holds it; the others answer MOVED, which is followed
// (from_cluster.go): when no node served the marker, it fails with
// ErrFenceUnreached rather than report a clear that did not happen.
func delFence(ctx context.Context, pools *pool.Set, info shard.MigrationInfo, key string) error {
	if testHookBeforeFenceDelete != nil {
		testHookBeforeFenceDelete()
	}
	took := 0
	var last error
	for _, n := range info.From.Nodes() {
		_, at, err := onMarkerOwner(ctx, pools, n, "DEL", key) // from_cluster.go
		switch {
		case err == nil:
			took++
		case markerElsewhere(err):
			last = err
		default:
			var ne *shard.NodeError
			if errors.As(err, &ne) {
				return err
			}
			return &shard.NodeError{Node: at, Err: err}
		}
	}
	if took == 0 && last != nil {
		return unreached(key, last)
	}
	return nil
}

// finishAfterMove is Options.Finish: the move has just verified clean.
func finishAfterMove(ctx context.Context, pools *pool.Set, info shard.MigrationInfo, self string, rep *Report) error {
	_, err := finish(ctx, pools, info, self, false)
	// Only Finish's refusal itself leaves the fence up (Remaining); a
	// refusal wrapped with the failure to put the markers back, after
	// they were deleted, leaves none: that is the move's error.
	ce, refused := err.(*ClientsError)
	switch {
	case err == nil:
		rep.Finished = true
	case refused && errors.Is(err, ErrStillMigrating):
		rep.Remaining = ce.Conns
	default:
		return err
	}
	return nil
}
