package shard

import (
	"fmt"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/ring"
)

// checkShards reports, before the ring does, the shard problems a user
// makes by hand: a weight of 0 or less (weights are 1 or more everywhere:
// Config, files and URLs; a file or URL that leaves the weight out gets 1),
// and the same server listed twice under two spellings of its address
// (localhost:7431 and 127.0.0.1:7431, 127.0.0.1 and ::ffff:127.0.0.1,
// upper and lower case host names), which matches ErrBadConfig and
// ring.ErrDuplicateShard. Host names are compared as written, without DNS
// lookups.
func checkShards(shards []ring.Shard) error {
	seen := make(map[string]int, len(shards))
	for i, s := range shards {
		if s.Weight <= 0 {
			return badConfigf("shard %d (%s) has weight %d: weights are 1 or more (a file or URL that leaves the weight out gets 1; to take a shard out, remove it)",
				i, safeLabel(s.Name, s.Addr), s.Weight)
		}
		for _, k := range serverKeys(s.Addr) {
			if j, dup := seen[k]; dup && shards[j].Addr != s.Addr {
				// ring.New refuses the same address written twice with
				// ErrDuplicateShard: two spellings match it too.
				return &configError{cause: ring.ErrDuplicateShard,
					msg: fmt.Sprintf("shards %d (%s) and %d (%s) are the same server", j, addrkey.Redact(shards[j].Addr), i, addrkey.Redact(s.Addr))}
			}
			seen[k] = i
		}
	}
	return nil
}

// checkRouterNodes reports a user's Router that lists no node, a node
// whose address no dial could use, or one server under two spellings of
// its address (compared as checkShards compares a ring's shards): the
// client would keep two nodes for it, and ForEachShard and Scan would
// visit it twice. The same address under two names (two ranges of keys
// on one server) is one node.
func checkRouterNodes(nodes []Node) error {
	if len(nodes) == 0 {
		return badConfigf("the Router lists no node")
	}
	seen := make(map[string]int, len(nodes))
	for i, n := range nodes {
		if err := checkHostPort(n.Addr); err != nil {
			return badConfigf("Router node %d (%s): %w", i, safeLabel(n.Name, n.Addr), err)
		}
		for _, k := range serverKeys(n.Addr) {
			if j, dup := seen[k]; dup && nodes[j].Addr != n.Addr {
				return badConfigf("Router nodes %d (%s) and %d (%s) are the same server under two addresses: name it by one address",
					j, nodes[j].Addr, i, n.Addr)
			}
			seen[k] = i
		}
	}
	return nil
}

// serverKeys returns the canonical forms of a host:port address
// (addrkey.Of: one server under two spellings shares a form). Unparsable
// addresses give none; the ring reports them.
func serverKeys(addr string) []string { return addrkey.Of(addr) }

// safeLabel is the label of a shard or node for an error: its name, or
// its address with any credentials pasted into it redacted (the address
// is quoted before it is checked).
func safeLabel(name, addr string) string {
	if name != "" {
		return name
	}
	return addrkey.Redact(addr)
}
