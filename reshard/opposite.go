package reshard

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// A rollback from B back to A must not start while the mover of A -> B
// still runs: it would move keys forward again after the processes that
// turned around moved them back and remembered them as moved. That mover
// connects to A's nodes (it scans them), which the rollback's client
// check (on B's nodes) does not read, and its connections are not
// beacons. So a Move names its connections after its migration
// (moverPoolFor), and arming a migration first reads CLIENT LIST on the
// nodes of both topologies for a Move of the opposite one.

// moverGrace is how long a connection of the opposite migration's mover
// may linger: a mover that has just returned closes its connections, and
// the servers drop them as soon as they read the close.
const moverGrace = time.Second

// noOppositeMover returns a *ClientsError matching ErrMoverRunning while
// a Move of the migration opposite to info has connections open on the
// nodes of either topology.
func noOppositeMover(ctx context.Context, pools *pool.Set, info shard.MigrationInfo) error {
	nodes := appendNodes(info.From.Nodes(), info.To.Nodes())
	deadline := time.Now().Add(moverGrace)
	for {
		entries, err := clientListOn(ctx, pools, nodes)
		if err != nil {
			return err
		}
		var running []ClientConn
		for _, e := range entries {
			if opposite(e.name, info) {
				running = append(running, ClientConn{Node: e.node, ID: e.id, Addr: e.addr, Name: e.name,
					Reason: "a mover of the opposite migration: stop it (interrupt it or let it end) before this one"})
			}
		}
		if len(running) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return &ClientsError{Conns: running, Headline: "belong to a mover of the opposite migration, still running", err: ErrMoverRunning}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shardis: arming the migration: %w", ctx.Err())
		case <-time.After(armPoll):
		}
	}
}

// opposite reports whether a connection name is a Move's of the migration
// opposite to info (moverPoolFor). A Move of info itself (this one's own
// connections among them) is not: between two clusters, which match any
// cluster (processes may name one by different seeds), its name would
// otherwise match the opposite migration too.
func opposite(name string, info shard.MigrationInfo) bool {
	mig, ok := strings.CutPrefix(name, moverName+":")
	if !ok || mig == info.FromID+">"+info.ToID {
		return false
	}
	from, to, ok := strings.Cut(mig, ">")
	return ok && beaconMatches(shard.ClientName{From: from, To: to}, shard.MigrationInfo{FromID: info.ToID, ToID: info.FromID})
}
