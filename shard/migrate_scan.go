package shard

// shardNodes returns the nodes ForEachShard visits: the current
// topology's, and during a migration also the old topology's that are not
// among them (a keyless command such as SCRIPT LOAD or FLUSHDB must reach
// the keys that have not moved yet).
func (c *Client) shardNodes() []Node {
	nodes := c.currentRouter().Nodes()
	m := c.mig.Load()
	if m == nil {
		return nodes
	}
	return appendNew(nodes, m.from.Nodes())
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
// then every new node (a node in both is walked twice): a key that moves
// while the scan runs moves from an old node to a new one, so it is met
// at the one or at the other, and the remembered keys drop the repeats.
func (c *Client) scanPlan() (nodes []Node, global bool) {
	m := c.mig.Load()
	if m == nil {
		return c.currentRouter().Nodes(), false
	}
	return append(m.from.Nodes(), c.currentRouter().Nodes()...), true
}

// scanOwns reports whether a key found on node n is reported: n serves it
// under the current routing, or, during a migration, n is its old owner
// (it has not moved yet).
func (c *Client) scanOwns(n Node, key string) bool {
	if c.mig.Load() != nil && IsFenceKey(key) {
		return false // the fence's marker (migrate_fence.go)
	}
	if owner, err := c.currentRouter().Route(key); err == nil && owner.Addr == n.Addr {
		return true
	}
	m := c.mig.Load()
	if m == nil {
		return false
	}
	owner, err := m.from.Route(key)
	return err == nil && owner.Addr == n.Addr
}
