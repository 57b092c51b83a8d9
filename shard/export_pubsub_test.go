package shard

// PointSlotAt makes c believe, until its next topology refresh, that addr
// serves slot, as a stale slot table would.
func PointSlotAt(c *Client, slot int, addr string) { c.applyMoved(slot, addr) }
