package shard

import (
	"context"
	"fmt"
	"slices"

	"github.com/shardis/shardis/internal/runid"
)

// distinctServers refuses a migration whose old topology (from) and new
// topology (to) name one server by two addresses (localhost:P and
// 127.0.0.1:P, a DNS name and its address): the keys placed on it under
// one address would "move" to the same server under the other, and a
// MIGRATE to the server it runs on holds that server until its timeout,
// then fails, for every such key. The servers are told apart by their
// run_id (INFO server), asked through the client's pools; a node that
// does not answer, or whose user may not run INFO, is left out (the
// mover's own check, reshard.Move, asks again). The error matches
// ErrMigration and ErrBadConfig and names both addresses.
func (c *Client) distinctServers(ctx context.Context, from, to []Node) error {
	inFrom := make(map[string]bool, len(from))
	for _, n := range from {
		inFrom[n.Addr] = true
	}
	inTo := make(map[string]bool, len(to))
	for _, n := range to {
		inTo[n.Addr] = true
	}
	// Only the nodes of one side alone can alias a node of the other: an
	// address in both topologies is one node, whose keys stay.
	var fromOnly, toOnly []string
	for _, n := range from {
		if !inTo[n.Addr] && !slices.Contains(fromOnly, n.Addr) {
			fromOnly = append(fromOnly, n.Addr)
		}
	}
	for _, n := range to {
		if !inFrom[n.Addr] && !slices.Contains(toOnly, n.Addr) {
			toOnly = append(toOnly, n.Addr)
		}
	}
	if len(fromOnly) == 0 || len(toOnly) == 0 {
		return nil
	}
	ids := c.serverIDs(ctx, append(append([]string(nil), fromOnly...), toOnly...))
	for _, f := range fromOnly {
		id, ok := ids[f]
		if !ok {
			continue
		}
		for _, t := range toOnly {
			if ids[t] == id {
				return fmt.Errorf("%w: %w: %s (old topology) and %s (new topology) are one server (the same run_id): its keys would move to the server they are on; name it by one address in both topologies",
					ErrMigration, ErrBadConfig, f, t)
			}
		}
	}
	return nil
}

// serverIDs asks each address its server's run_id through the client's
// pools (runid.Of). Addresses that give none are left out.
func (c *Client) serverIDs(ctx context.Context, addrs []string) map[string]string {
	return runid.Of(ctx, c.pools.Get, addrs)
}
