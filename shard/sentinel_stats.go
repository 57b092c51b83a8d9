package shard

// SentinelStats describe one Sentinel shard as the client sees it now.
type SentinelStats struct {
	// Name is the shard's name on the ring; MasterName the Sentinels' name
	// for its master set.
	Name       string
	MasterName string
	// Master is the address of the master the client writes to: the last
	// one the Sentinels named and ROLE confirmed.
	Master string
	// Replicas are the master's healthy replicas as the Sentinels last
	// listed them. When ReadFrom is a replica policy they are those that
	// serve reads: only those that said with ROLE that their link to the
	// master is up, and not those that failed since (a read or a health
	// check failed there), which serve no reads until a query finds them
	// synced again, however long the Sentinels are down. One that health
	// checks marked down before the query stays listed; its Stats.Nodes
	// entry says Down, and reads skip it while it is.
	Replicas []string
	// Failovers counts the master changes the client followed.
	Failovers int64
	// Queries counts the queries of the Sentinels; SwitchMessages the
	// +switch-master messages received (each Sentinel sends one per
	// failover).
	Queries        int64
	SwitchMessages int64
	// Stale is set when the last query failed (no Sentinel answered, or
	// none named a master that ROLE confirmed): the client keeps serving
	// the last known master (or, when that one says it has become a
	// replica, the master it replicates from, once ROLE confirms it).
	// LastError says why.
	Stale     bool
	LastError string
	// Subscribed is the number of Sentinels the client is subscribed to
	// for +switch-master now.
	Subscribed int
	// SubscribeError, when not empty, says why the client is not
	// subscribed to some of the shard's Sentinels now: the last failure
	// of each (a refused dial or login, a SUBSCRIBE refused with NOPERM
	// to an ACL user without the +switch-master channel, a broken
	// subscription). Without the subscriptions failovers are still
	// followed, from failures and periodic queries, only later. It never
	// holds a password.
	SubscribeError string
}

// sentinelStats fills in the Sentinel part of Stats.
func (c *Client) sentinelStats(out *Stats) {
	if c.sent == nil {
		return
	}
	out.Failovers = c.sent.failovers.Load()
	for _, sh := range c.sent.shards {
		s := SentinelStats{
			Name:           sh.cfg.Name,
			MasterName:     sh.cfg.master(),
			Failovers:      sh.failovers.Load(),
			Queries:        sh.queries.Load(),
			SwitchMessages: sh.switches.Load(),
			Stale:          sh.stale.Load(),
		}
		if p := sh.master.Load(); p != nil {
			s.Master = *p
		}
		s.Replicas = c.statsReplicas(sh)
		if p := sh.lastErr.Load(); p != nil {
			s.LastError = *p
		}
		if sh.watcher != nil {
			s.Subscribed = sh.watcher.Connected()
			if err := sh.watcher.Err(); err != nil {
				s.SubscribeError = err.Error()
			}
		}
		out.Sentinel = append(out.Sentinel, s)
	}
}

// statsReplicas is what Stats lists as sh's replicas: those the last
// query found, less, when they serve reads, those that reads cannot use
// now (placeSentinelRead's fit): dropped after a failure, or failed
// since the query (dropped at the next read). Being down shows in the
// node's own stats.
func (c *Client) statsReplicas(sh *sentShard) []string {
	if !c.sent.readers {
		if p := sh.repAddrs.Load(); p != nil {
			return append([]string(nil), (*p)...)
		}
		return nil
	}
	p := sh.replicas.Load()
	if p == nil {
		return nil
	}
	seen := sh.repSeen.Load()
	var out []string
	for _, r := range *p {
		if !c.failedSinceCheck(seen, r) {
			out = append(out, c.nodes.get(int(r)).node.Addr)
		}
	}
	return out
}
