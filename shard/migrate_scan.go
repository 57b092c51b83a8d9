package shard

// shardNodes returns the nodes ForEachShard visits: the current
// topology's, and during a migration also those of the other topologies
// that hold keys (migTopologies) that are not among them (a keyless
// command such as SCRIPT LOAD or FLUSHDB must reach the keys that have not
// moved yet).
func (c *Client) shardNodes() []Node {
	nodes := c.currentRouter().Nodes()
	m := c.mig.Load()
	if m == nil {
		return nodes
	}
	for _, r := range c.migTopologies(m) {
		nodes = appendNew(nodes, r.Nodes())
	}
	return nodes
}

// migTopologies returns the topologies that hold keys during migration
// m, in the order keys move between them: a rollback's keys not moved
// forward yet sit in the old topology of the migration it turns around
// (m.prev.from), which is also where they move back to; then m's old
// topology; then the one m moves keys to (a ring or router client routes
// by the old one until the fence, so its current router is not always
// that one).
func (c *Client) migTopologies(m *migState) []Router {
	out := make([]Router, 0, 3) // inlined: no allocation per key of a Scan
	if m.prev != nil {
		out = append(out, m.prev.from)
	}
	out = append(out, m.from)
	if m.next != nil {
		out = append(out, m.next.router)
	} else {
		out = append(out, c.currentRouter())
	}
	return out
}

// appendNew appends the nodes of more whose address nodes does not have.
func appendNew(nodes, more []Node) []Node {
	have := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		have[n.Addr] = true
	}
	for _, n := range more {
		if !have[n.Addr] {
			have[n.Addr] = true
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// scanPlan returns the nodes a Scan walks and whether it must remember
// every key across nodes. During a migration it walks every old node and
// then every new node (a node in both is walked twice), whatever the
// fence's phase (keys start moving when it arms, maybe during the Scan):
// a key that moves while the scan runs moves from an old node to a new
// one, so it is met at the one or at the other, and the remembered keys
// drop the repeats. A rollback (m.prev) walks the nodes of the topology
// it returns to first and last: its keys that have not moved forward yet
// are there, and those that move back during the Scan go there.
func (c *Client) scanPlan() (nodes []Node, global bool) {
	m := c.mig.Load()
	if m == nil {
		return c.currentRouter().Nodes(), false
	}
	for _, r := range c.migTopologies(m) {
		nodes = append(nodes, r.Nodes()...)
	}
	return nodes, true
}

// scanOwns reports whether a key found on node n is reported: n serves it
// under the current routing, or, during a migration, n is its owner in
// one of the topologies that hold keys (migTopologies: it has not moved
// yet, or has moved already).
//
// Outside a migration a cluster master's keys are all reported: a master
// holds only the keys of its slots and of a slot it is importing, and the
// client's slot map may lag behind the cluster's (a resharding it has not
// met a MOVED for). Filtered by that map, the keys of a slot being moved
// that already sit on the importing master, and every key of a slot moved
// to another known master, were silently left out. A key that moves to a
// master not yet walked may then be reported twice, as SCAN may repeat.
func (c *Client) scanOwns(n Node, key string) bool {
	if c.mig.Load() != nil && IsFenceKey(key) {
		return false // the fence's marker (migrate_fence.go)
	}
	if _, isCluster := c.currentRouter().(*ClusterRouter); isCluster && c.mig.Load() == nil {
		return true
	}
	if owner, err := c.currentRouter().Route(key); err == nil && owner.Addr == n.Addr {
		return true
	}
	m := c.mig.Load()
	if m == nil {
		return false
	}
	for _, r := range c.migTopologies(m) {
		if owner, err := r.Route(key); err == nil && owner.Addr == n.Addr {
			return true
		}
	}
	return false
}

// scanSkips reports whether a Scan passes over node n without sending it
// SCAN: a ring shard that auto-eject took out of the ring serves no key
// (they rehashed to the other shards), and it is out because it does not
// answer, so a SCAN sent there would fail the whole Scan for keys it would
// have filtered away anyway. During a migration nothing is skipped (the
// node may still hold keys that have not moved).
func (c *Client) scanSkips(n Node) bool {
	if c.mig.Load() != nil {
		return false
	}
	rr, ok := c.currentRouter().(*RingRouter)
	if !ok {
		return false
	}
	for i, m := range rr.nodes {
		if m.Addr == n.Addr {
			return rr.Ejected(i)
		}
	}
	return false
}
