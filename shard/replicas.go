package shard

import (
	"math/rand/v2"
)

// pickReader chooses the node that serves a read of slot: a replica of the
// slot's master by the configured policy, or master when no replica is up.
func (c *Client) pickReader(st *clusterState, slot, master int) int {
	if st == nil {
		return master
	}
	readers := st.readers[st.shardOf[slot]]
	switch len(readers) {
	case 0:
		return master
	case 1:
		if c.nodes.get(int(readers[0])).down.Load() {
			return master
		}
		return int(readers[0])
	}
	start := rand.IntN(len(readers))
	if c.clusterOpts().ReadFrom == ReadReplicaLatency {
		// From a random replica on: with no round trip measured (health
		// checks off, or not run yet) reads spread as with the random
		// policy instead of all going to the first replica.
		best, bestRTT := master, int64(0)
		for k := range readers {
			r := readers[(start+k)%len(readers)]
			ns := c.nodes.get(int(r))
			if ns.down.Load() {
				continue
			}
			rtt := ns.rtt.Load()
			if best == master || (rtt > 0 && (bestRTT == 0 || rtt < bestRTT)) {
				best, bestRTT = int(r), rtt
			}
		}
		return best
	}
	for k := range readers {
		r := int(readers[(start+k)%len(readers)])
		if !c.nodes.get(r).down.Load() {
			return r
		}
	}
	return master
}
