package shard

import (
	"context"
	"slices"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/internal/runid"
)

// distinctServers refuses a migration whose topologies name one server by
// two addresses (localhost:P and 127.0.0.1:P, a DNS name and its
// address), one in the old topology (from) and one in the new (to), or
// both within one of them (two nodes of a Router under a DNS name and its
// address, which Config.Validate cannot compare without a lookup): a key
// placed under one address by one topology and under the other by the
// other would "move" to the server it is on, and a MIGRATE to the server
// it runs on holds that server until its timeout, then fails, for every
// such key. The servers are told apart by their run_id (INFO server),
// asked on connections set up as the client's (serverIDs); a node that
// does not answer, or whose user may not run INFO, is left out (the mover's own check, reshard.Move, asks again).
// The error matches ErrMigration and ErrBadConfig and names both
// addresses.
func (c *Client) distinctServers(ctx context.Context, from, to []Node) error {
	inFrom := make(map[string]bool, len(from))
	for _, n := range from {
		inFrom[n.Addr] = true
	}
	inTo := make(map[string]bool, len(to))
	for _, n := range to {
		inTo[n.Addr] = true
	}
	var addrs []string // every address once, the old topology's first
	for _, n := range append(append([]Node(nil), from...), to...) {
		if !slices.Contains(addrs, n.Addr) {
			addrs = append(addrs, n.Addr)
		}
	}
	if len(addrs) < 2 {
		return nil
	}
	side := func(addr string) string {
		switch {
		case inFrom[addr] && inTo[addr]:
			return "both topologies"
		case inFrom[addr]:
			return "old topology"
		default:
			return "new topology"
		}
	}
	ids := c.serverIDs(ctx, addrs)
	first := make(map[string]string, len(ids)) // run_id -> its first address
	for _, a := range addrs {
		id, ok := ids[a]
		if !ok {
			continue
		}
		prev, seen := first[id]
		if !seen {
			first[id] = a
			continue
		}
		return errtext.Errorf("%w: %w: %s (%s) and %s (%s) are one server (the same run_id): keys placed under one address would move to the server they are on under the other; name it by one address in both topologies",
			ErrMigration, ErrBadConfig, prev, side(prev), a, side(a))
	}
	return nil
}

// serverIDs asks each address its server's run_id (runid.Of) on a
// connection of its own, set up as the client's (TLS, credentials), not a
// pooled one: a node whose pool is all in use (MaxActive with Wait, a
// connection held by a transaction) would hold the migration's start up
// for as long as ctx lets it, for ever without a deadline. Each answer is
// awaited a dial and a read timeout at the latest; addresses that give
// none are left out.
func (c *Client) serverIDs(ctx context.Context, addrs []string) map[string]string {
	ctx, cancel := context.WithTimeout(ctx, c.dialTimeout()+c.readTimeout)
	defer cancel()
	return runid.Of(ctx, c.pools.Dial, addrs)
}
