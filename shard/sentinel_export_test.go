package shard

// OnFailover registers fn for the client's internal failover events, so
// that tests can see each master change the client installs.
func OnFailover(c *Client, fn func(shardName, from, to string)) {
	c.sent.onFailover(func(ev failoverEvent) { fn(ev.Shard, ev.From, ev.To) })
}

// OnSentinelQueryFound makes fn run in each query of Sentinel shard i
// after it has verified a master, before it installs it.
func OnSentinelQueryFound(c *Client, i int, fn func(addr string)) {
	c.sent.shards[i].queryHook.Store(&fn)
}
