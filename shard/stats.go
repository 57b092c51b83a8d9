package shard

import "github.com/shardis/shardis/pool"

// NodeStats are the counters of one node.
type NodeStats struct {
	// Node is named as the topology the client routes by names its
	// address (as Nodes does): after a migration to a ring that names a
	// server anew, or once a Router renamed it, the new name, at the
	// latest by the next health check.
	Node     Node
	Down     bool  // marked down by health checks
	Commands int64 // commands sent (or failed fast) to the node
	Errors   int64 // connection-level failures (dial, I/O, timeout, down)
	Moved    int64 // MOVED redirects received (cluster mode)
	Ask      int64 // ASK redirects received (cluster mode)
	TryAgain int64 // TRYAGAIN replies received (cluster mode)
	Retries  int64 // commands sent again (cluster mode, Sentinel shards)
	ReadOnly bool  // a replica connection for reads (cluster mode)
	RTT      int64 // smoothed health PING round trip, nanoseconds
	Pool     pool.Stats
}

// Stats are the client's counters.
type Stats struct {
	// Nodes are the nodes of the topologies the client uses now: the one
	// it routes by, both sides of a migration, a cluster's masters and
	// replicas, the replicas of Sentinel shards that serve reads. A node
	// that left (a master the cluster forgot after a scale-in, the old
	// ring's shards once FinishMigration ended a migration, a replica the
	// Sentinels no longer list) is left out from the moment the client
	// installs the topology without it, or at the next health check, and
	// is no longer health-checked; its counters reappear, with its pool's
	// starting from zero, if the same address joins again. A cluster node
	// that failed but that the cluster still lists stays, with Down set.
	// A cluster server is listed once, under its current role (ReadOnly
	// for a replica): after a failover the entry of its old role is left
	// out.
	Nodes     []NodeStats
	Refreshes int64 // cluster topology refreshes run since New
	// OtherCluster counts the topology answers since New that came from
	// another cluster (an address the cluster used, reused by a node of
	// another one; see cluster.ErrOtherCluster): refused, or taken
	// (ClusterSwitches). Anything but zero deserves a look: a node of
	// the cluster's topology is not what the cluster thinks.
	OtherCluster int64
	// ClusterSwitches counts the refreshes since New that took another
	// cluster's answer, from a seed, because no node of the cluster in
	// use answered: the client follows that cluster since, and every key
	// goes to it. That is how a cluster replaced as a whole is followed;
	// it is also what a client cut off from its cluster does when a
	// seed's address now serves another one.
	ClusterSwitches int64
	Failovers       int64 // master changes followed on Sentinel shards
	// Sentinel describes each Sentinel shard (ring mode).
	Sentinel []SentinelStats
}

// Stats returns the counters of the client and of every node of its
// current topology (see Stats.Nodes).
func (c *Client) Stats() Stats {
	c.poolStatsMu.RLock()
	ps := c.pools.Stats()
	out := Stats{Refreshes: c.refr.count.Load(), OtherCluster: c.refr.otherCluster.Load(), ClusterSwitches: c.refr.switches.Load()}
	for _, ns := range c.nodes.all() {
		if ns.retired.Load() {
			continue
		}
		p := ps[ns.node.Addr]
		if !ns.readOnly {
			// A Sentinel shard's pools that started over (installed).
			p.WaitCount += ns.poolBase.WaitCount
			p.WaitDuration += ns.poolBase.WaitDuration
			p.Dials += ns.poolBase.Dials
			p.DialErrors += ns.poolBase.DialErrors
		}
		out.Nodes = append(out.Nodes, NodeStats{
			Node:     ns.node,
			Down:     ns.down.Load(),
			Commands: ns.commands.Load(),
			Errors:   ns.errors.Load(),
			Moved:    ns.moved.Load(),
			Ask:      ns.ask.Load(),
			TryAgain: ns.tryAgain.Load(),
			Retries:  ns.retries.Load(),
			ReadOnly: ns.readOnly,
			RTT:      ns.rtt.Load(),
			Pool:     p,
		})
	}
	c.poolStatsMu.RUnlock()
	c.sentinelStats(&out)
	return out
}
