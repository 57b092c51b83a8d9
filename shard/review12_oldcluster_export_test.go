package shard

// Review12OldClusterRoute returns the address that the table of the
// cluster c's migration moves away from routes key to; "" without a
// migration from a cluster.
func Review12OldClusterRoute(c *Client, key string) string {
	m := c.mig.Load()
	if m == nil {
		return ""
	}
	r, ok := m.from.(*ClusterRouter)
	if !ok {
		return ""
	}
	n, err := r.Route(key)
	if err != nil {
		return ""
	}
	return n.Addr
}
