package reshard

import (
	"context"
	"fmt"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/internal/runid"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// serverIDs asks every node its run_id (INFO server), in parallel. A node
// that does not answer, or whose user may not run INFO, is left out: the
// steps that need it report it.
func serverIDs(ctx context.Context, pools *pool.Set, nodes []shard.Node) map[string]string {
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
	}
	return runid.Of(ctx, pools.Get, addrs)
}

// aliases maps each address of nodes that reaches the same server as an
// earlier one (another spelling: localhost and 127.0.0.1, a DNS name and
// its address) to that earlier address.
func aliases(ctx context.Context, pools *pool.Set, nodes []shard.Node) map[string]string {
	ids := serverIDs(ctx, pools, nodes)
	first := map[string]string{} // run_id -> first address
	out := map[string]string{}
	for _, n := range nodes {
		id, ok := ids[n.Addr]
		if !ok {
			continue
		}
		if a, seen := first[id]; seen && a != n.Addr {
			out[n.Addr] = a
		} else if !seen {
			first[id] = n.Addr
		}
	}
	return out
}

// checkDistinctServers refuses two topologies that name one server by two
// addresses: its keys would move to the server they are on, and a MIGRATE
// to the server it runs on holds that server until its timeout.
func checkDistinctServers(ctx context.Context, pools *pool.Set, info shard.MigrationInfo) error {
	nodes := appendNodes(info.To.Nodes(), info.From.Nodes())
	al := aliases(ctx, pools, nodes)
	for _, n := range nodes {
		if addr, ok := al[n.Addr]; ok {
			return fmt.Errorf("%w: %s and %s are one server (the same run_id): name it by one address in both topologies", shard.ErrBadConfig, n.Addr, addr)
		}
	}
	return nil
}

// followNodes makes pools reach each of nodes that the client c resolves
// to another address at the moment of each dial: a Sentinel shard, whose
// address names the shard ("sentinel/<name>"), reaches its verified
// master (shard.Client.NodeAddr).
func followNodes(c *shard.Client, pools *pool.Set, nodes []shard.Node) error {
	for _, n := range nodes {
		if a, err := c.NodeAddr(n); err == nil && a == n.Addr {
			continue
		}
		if err := pools.SetResolver(n.Addr, func() (string, error) { return c.NodeAddr(n) }); err != nil {
			return errtext.Errorf("%w: node %s: %w", shard.ErrBadConfig, n, err)
		}
	}
	return nil
}
