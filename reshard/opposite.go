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
// nodes of both topologies for a Move of the opposite one. A Move also
// refuses to start beside another Move of its own migration
// (noOtherMover).

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
	from, to, _, ok := parseMoverName(name)
	if !ok || from == info.FromID && to == info.ToID {
		return false
	}
	return beaconMatches(shard.ClientName{From: from, To: to}, shard.MigrationInfo{FromID: info.ToID, ToID: info.FromID})
}

// parseMoverName reads the name of a Move's connection
// ("shardis-reshard:FROM>TO>INSTANCE", moverPoolFor); instance is empty
// in the names of earlier versions ("shardis-reshard:FROM>TO"). A
// topology's ID never holds '>' (shard.TopologyID).
func parseMoverName(name string) (from, to, instance string, ok bool) {
	mig, ok := strings.CutPrefix(name, moverName+":")
	if !ok {
		return "", "", "", false
	}
	parts := strings.Split(mig, ">")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return "", "", "", false
	}
	if len(parts) == 3 {
		instance = parts[2]
	}
	return parts[0], parts[1], instance, true
}

// sameMover reports whether a connection name is a Move's of the
// migration info other than the one whose routing client is instance
// self ("" for none: every Move of info is another).
func sameMover(name string, info shard.MigrationInfo, self string) bool {
	from, to, inst, ok := parseMoverName(name)
	if !ok || self != "" && inst == self {
		return false
	}
	return from == info.FromID && to == info.ToID ||
		beaconMatches(shard.ClientName{From: from, To: to}, info)
}

// noOtherMover returns a *ClientsError matching ErrMoverAlreadyRunning
// while another Move of the migration info (not the one whose routing
// client is instance self) has connections open on the nodes of either
// topology: two movers of one migration would each take the other's
// beacons for a process still on the migration, keep the fence, and count
// the same keys twice. A mover that has just ended, or was killed (its
// connections close with its process), is given moverGrace to be gone.
func noOtherMover(ctx context.Context, pools *pool.Set, info shard.MigrationInfo, self string) error {
	nodes := appendNodes(info.From.Nodes(), info.To.Nodes())
	deadline := time.Now().Add(moverGrace)
	for {
		entries, err := clientListOn(ctx, pools, nodes)
		if err != nil {
			return err
		}
		var running []ClientConn
		for _, e := range entries {
			if !sameMover(e.name, info, self) {
				continue
			}
			reason := "a mover of this migration (shardis reshard)"
			if e.age != "" {
				reason += ", connected for " + e.age + " s"
			}
			reason += ": let it end, or stop it, before starting another"
			running = append(running, ClientConn{Node: e.node, ID: e.id, Addr: e.addr, Name: e.name, Reason: reason})
		}
		if len(running) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return &ClientsError{Conns: running, Headline: "belong to another mover of this migration, already running", err: ErrMoverAlreadyRunning}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shardis: checking for another mover: %w", ctx.Err())
		case <-time.After(armPoll):
		}
	}
}
