package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/internal/runid"
	"github.com/shardis/shardis/sentinel"
)

// query asks the Sentinels for the shard's master, checks it with ROLE,
// installs it, and lists the replicas when they serve reads. When no
// Sentinel answers, the last known master keeps serving (the shard is
// then marked stale in Stats); if that master says it has become a
// replica, its own master is checked and taken instead.
func (c *Client) query(ctx context.Context, sh *sentShard) error {
	sh.queries.Add(1)
	sh.instMu.Lock()
	gen := sh.switchInstall
	sh.instMu.Unlock()
	refused := loginRefusals{}
	addr, _, err := sh.cli.RankedMasterAddr(ctx, refused.rank(c.masterRank))
	if err != nil {
		// No Sentinel named a confirmed master: keep serving the last
		// known one, and say so in Stats. If it says it has become a
		// replica of another server that ROLE confirms, follow it there.
		msg := err.Error()
		serr := errtext.Errorf("shardis: Sentinel shard %s: %w", sh.cfg.Name, err)
		sh.lastErr.Store(&msg)
		sh.queryErr.Store(&serr)
		sh.stale.Store(true)
		cur := sh.master.Load()
		if cur == nil {
			return serr
		}
		if a, ok := refused.majority(len(sh.cli.Addrs())); ok && !c.sameServerLookup(ctx, *cur, a) {
			// A majority of the Sentinels name a master that refuses
			// the client's credentials (see loginRefusals).
			c.installFound(ctx, sh, a, gen)
			return serr
		}
		if next, rerr := c.followRole(ctx, *cur); rerr == nil && next != *cur {
			c.installFound(ctx, sh, next, gen)
		}
		return serr
	}
	sh.stale.Store(false)
	sh.lastErr.Store(nil)
	sh.queryErr.Store(nil)
	if !c.installFound(ctx, sh, addr, gen) {
		// A +switch-master installed a newer master meanwhile, or the
		// current master was kept: the replicas are listed next time.
		return nil
	}
	c.loadReplicas(ctx, sh, addr)
	return nil
}

// switchBackGuard is how long after a +switch-master a query may not
// bring back the master it replaced while the announced one still says it
// is the master: a Sentinel that has not heard of the failover yet names
// the old master, which says it is a master too until the Sentinels make
// it a replica, and writes sent to it then would be lost with its
// demotion.
const switchBackGuard = 10 * time.Second

// installFound installs the master a query found, unless a +switch-master
// installed one since the query began (gen): what the query found may
// then be the master just failed over from, and installing it would send
// writes back to it. The query that the message asked for follows. Nor
// does it bring back, within switchBackGuard, the master a +switch-master
// replaced while the announced one still says it is the master. Both
// comparisons take a host name and its address for one server
// (sameServerLookup), as installed does: a Sentinel that announces host
// names may name the replaced master "redis-1:P" after a +switch-master
// that named it "10.0.0.1:P". When whether addr is the current master
// under another spelling is not known (the lookup of a host name failed
// or did not end: addrkey.Unknown), the current master and its pools are
// kept only when it is the server at addr (sameRunningServer): the next
// query compares again, with the lookup's answer kept by then. That it
// still says it is the master is not enough: the master just failed over
// from says so too until the Sentinels make it a replica (one paused
// while they failed over, resumed since), and writes sent to it then
// would be lost with its demotion.
func (c *Client) installFound(ctx context.Context, sh *sentShard, addr string, gen uint64) bool {
	if h := sh.queryHook.Load(); h != nil {
		(*h)(addr)
	}
	sh.instMu.Lock()
	from, at := sh.switchedFrom, sh.switchedAt
	sh.instMu.Unlock()
	guarded := from != "" && time.Since(at) < switchBackGuard
	// Each comparison may wait up to the dial timeout for the lookup of
	// a host name: the two run at once (outside instMu, and the one with
	// from only within the guard's time), and the one with the current
	// master is not repeated. One after another, with a resolver that
	// does not answer, they added a dial timeout each to the query.
	cur := sh.master.Load()
	curMatch, backMatch := addrkey.Different, addrkey.Different
	var wg sync.WaitGroup
	if cur != nil {
		wg.Go(func() { curMatch = c.compareServers(ctx, *cur, addr) })
	}
	if guarded {
		wg.Go(func() { backMatch = c.compareServers(ctx, addr, from) })
	}
	wg.Wait()
	if cur != nil && curMatch == addrkey.Unknown && c.sameRunningServer(ctx, sh, addr) {
		return false
	}
	if now := sh.master.Load(); backMatch == addrkey.Same && now != nil {
		m := curMatch
		if cur == nil || *now != *cur {
			m = c.compareServers(ctx, *now, addr)
		}
		if m != addrkey.Same && c.checkMaster(ctx, *now) == nil {
			return false
		}
	}
	sh.instMu.Lock()
	if sh.switchInstall != gen {
		sh.instMu.Unlock()
		return false
	}
	old := sh.master.Swap(&addr)
	sh.instMu.Unlock()
	known := ""
	if cur != nil {
		known = *cur
	}
	c.installed(sh, old, addr, known, curMatch)
	return true
}

// sameRunningServer reports whether the server behind the shard's pools
// (its current master, asked on a pooled connection, so with no lookup
// of the master's host name) is the server at addr: both give one run_id
// (INFO server). A server that does not answer, a full pool (MaxActive
// borrowed, no Pool.Wait) or a user that may not run INFO leave it
// unknown, which is false: addr, which the Sentinels name and ROLE
// confirmed, is then taken, at worst a needless change of pools for a
// server under another spelling, never writes sent to a server the
// Sentinels failed over from.
func (c *Client) sameRunningServer(ctx context.Context, sh *sentShard, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, c.dialTimeout()+c.readTimeout)
	defer cancel()
	ids := runid.Of(ctx, c.nodeConn, []string{sh.key, addr})
	return ids[sh.key] != "" && ids[sh.key] == ids[addr]
}

// masterRank verifies with ROLE that addr is a master, and ranks it by
// the number of replicas ROLE lists: of the answers of a tie that the
// Sentinels' config epochs cannot break (a user that may not run
// SENTINEL MASTER), the master the set's replicas follow is the one of
// the latest failover, not an old master partitioned from them or
// restarted empty.
func (c *Client) masterRank(ctx context.Context, addr string) (int, error) {
	role, err := c.roleOf(ctx, addr)
	if err != nil {
		return 0, err
	}
	if role.Kind != sentinel.RoleMaster {
		return 0, fmt.Errorf("%w: %s says it is a %s", sentinel.ErrNotMaster, addr, role.Kind)
	}
	return len(role.Replicas), nil
}

// checkMaster verifies with ROLE that addr is a master.
func (c *Client) checkMaster(ctx context.Context, addr string) error {
	role, err := c.roleOf(ctx, addr)
	if err != nil {
		return err
	}
	if role.Kind != sentinel.RoleMaster {
		return fmt.Errorf("%w: %s says it is a %s", sentinel.ErrNotMaster, addr, role.Kind)
	}
	return nil
}

// followRole returns the master that addr replicates from, checked with
// ROLE, when addr says it is a replica; addr itself when it is a master.
func (c *Client) followRole(ctx context.Context, addr string) (string, error) {
	role, err := c.roleOf(ctx, addr)
	if err != nil {
		return "", err
	}
	switch role.Kind {
	case sentinel.RoleMaster:
		return addr, nil
	case sentinel.RoleReplica:
		if err := c.checkMaster(ctx, role.MasterAddr); err != nil {
			return "", err
		}
		return role.MasterAddr, nil
	}
	return "", fmt.Errorf("%w: %s says it is a %s", sentinel.ErrNotMaster, addr, role.Kind)
}

// roleOf asks the data node at addr for its ROLE, with the data nodes'
// credentials: on a pooled connection when addr is a node the client
// uses (a replica serving reads), otherwise on a connection of its own,
// closed after. A pool made for a master's address (the shard's node
// dials it under its stable key) or for a retired replica would never be
// removed (settleNodes removes the pools of nodes as they retire), and
// would keep an idle connection to the server for the client's life.
func (c *Client) roleOf(ctx context.Context, addr string) (sentinel.Role, error) {
	ctx, cancel := context.WithTimeout(ctx, c.dialTimeout()+c.readTimeout)
	defer cancel()
	conn, err := c.nodeConn(ctx, addr)
	if err != nil {
		return sentinel.Role{}, err
	}
	defer conn.Close()
	return sentinel.CheckRole(ctx, conn)
}

// nodeConn returns a connection to the data node at addr for a check
// (roleOf), pooled or of its own as roleOf says; Close gives it back or
// closes it.
func (c *Client) nodeConn(ctx context.Context, addr string) (redis.Conn, error) {
	if i, ok := c.nodes.lookup(addr); ok && !c.nodes.get(i).retired.Load() {
		return c.pools.Get(ctx, addr)
	}
	return c.pools.Dial(ctx, addr)
}

// installed follows a change of the shard's master from old to addr
// (installFound or switched swapped it in): the pools of the shard start
// over (connections to the old master close as they come back), its
// failure count starts over (a node marked down comes up when the new
// master answers a health check, run at once), and the failover is
// counted. The same server under another spelling (Sentinels that
// announce host names and Sentinels that do not, a host name and its
// address) is no change. A comparison whose answer is not known
// (addrkey.Unknown) counts as a change: installFound and switched have
// kept the current master when it is the server at addr (the same
// run_id). It runs outside instMu,
// as it calls the user's hooks. known is a master the caller compared
// with addr already, with the answer knownMatch ("" for none): when it
// is old, the comparison is not made again, which would wait for the
// same lookup of a host name once more.
func (c *Client) installed(sh *sentShard, old *string, addr string, known string, knownMatch addrkey.Match) {
	if old == nil {
		return
	}
	m := knownMatch
	if known == "" || *old != known {
		m = c.compareServers(c.life, *old, addr)
	}
	if m == addrkey.Same {
		return
	}
	ns := c.nodes.get(sh.node)
	ns.epoch.Add(1) // before Remove: a borrow after it sees the new epoch
	// The node stays, and so do its pool counters in Stats: those of the
	// pools removed go on in poolBase, taken with Stats held off.
	c.poolStatsMu.Lock()
	if st, ok := c.pools.Stats()[sh.key]; ok {
		b := &ns.poolBase
		b.WaitCount += st.WaitCount
		b.WaitDuration += st.WaitDuration
		b.Dials += st.Dials
		b.DialErrors += st.DialErrors
	}
	_ = c.pools.Remove(sh.key)
	c.poolStatsMu.Unlock()
	// The failures counted were the old master's: the count starts over.
	// A node marked down is not marked up for that: ROLE, which confirmed
	// the new master, is answered also by a master loading its data,
	// which refuses every command (LOADING). It comes up when the new
	// master answers its health check, run now rather than a
	// HealthOptions.Interval later.
	ns.fails.Store(0)
	if !ns.down.Load() {
		ns.cause.Store(nil)
	}
	sh.failovers.Add(1)
	c.sent.failovers.Add(1)
	ev := failoverEvent{Shard: sh.cfg.Name, MasterSet: sh.cfg.master(), Node: sh.node, From: *old, To: addr, At: time.Now()}
	queued := c.queueSentinelPromoted(ev) // the NodeState hook (sentinel_events.go)
	c.sent.notify(ev)
	c.subs.topo.notify() // subscriptions leave the old master (subscription_place.go)
	if probe := ns.down.Load() && !c.closed.Load(); queued || probe {
		c.sentinelDeliver(sh.node, probe)
	}
}

// loadReplicas lists the shard's healthy replicas of master (for Stats)
// and, when replicas serve reads, registers them as nodes. When replicas
// serve reads, only those that say (ROLE) they are replicas of master
// with their link to it up are kept: a replica that restarted answers reads
// from an empty data set until it has synced, while the Sentinels, which
// read a replica's INFO every few seconds, still list it as healthy.
func (c *Client) loadReplicas(ctx context.Context, sh *sentShard, master string) {
	sh.repMu.Lock()
	drops := sh.repDrops
	sh.repMu.Unlock()
	reps, err := sh.cli.Replicas(ctx)
	if err != nil {
		return // keep the last list
	}
	listed := c.listedReplicas(ctx, reps, master)
	var idx []int32
	seen := map[int32]int64{}
	unsynced := false // a listed replica registered as a node but not used
	if c.sent.readers {
		// The failure counts are read before ROLE: a failure after the
		// check counts against the replica.
		nodes := make([]int32, len(listed))
		for k, a := range listed {
			i := c.nodes.add(Node{Name: sh.replicaName(a), Addr: a})
			nodes[k] = int32(i)
			seen[int32(i)] = c.nodes.get(i).errors.Load()
		}
		synced := c.syncedReplicas(ctx, listed, master, c.servingReplicas(sh))
		for k, a := range listed {
			if slices.Contains(synced, a) {
				idx = append(idx, nodes[k])
			}
		}
		unsynced = len(synced) != len(listed)
		listed = synced
	}
	addrs := listed
	sh.repMu.Lock()
	if sh.repDrops != drops {
		// A read dropped a replica while the Sentinels were asked: what
		// they said may be older than that, and the drop asked for the
		// query that follows.
		sh.repMu.Unlock()
		return
	}
	sh.repSeen.Store(&seen)
	prev := sh.replicas.Swap(&idx)
	sh.repAddrs.Store(&addrs)
	sh.repMu.Unlock()
	if prev == nil || !slices.Equal(*prev, idx) || unsynced {
		c.settleNodes() // a replica no longer listed retires (nodes.go)
	}
}

// replicaCompareLimit bounds how many replicas listedReplicas compares
// with the master at once.
const replicaCompareLimit = 16

// listedReplicas returns the addresses (in order) of the healthy replicas
// of reps that are not master and do not name another server as their
// master. The Sentinels may spell the master otherwise than a replica
// does (a host name, announced, against an IP address): the replicas are
// compared in parallel (at most replicaCompareLimit at once), all within
// one dial timeout, as each comparison may wait that long for a lookup
// (a slow resolver): one replica after another, a set of many replicas
// outlasted the query's bound (queryBound), and their ROLE checks then
// failed. When a lookup cannot tell (addrkey.Unknown), the replica is
// listed and ROLE decides (syncedReplicas).
func (c *Client) listedReplicas(ctx context.Context, reps []sentinel.Replica, master string) []string {
	ctx, cancel := context.WithTimeout(ctx, c.dialTimeout())
	defer cancel()
	keep := make([]bool, len(reps))
	sem := make(chan struct{}, replicaCompareLimit)
	var wg sync.WaitGroup
	for i, r := range reps {
		if !r.Healthy() {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			keep[i] = !c.sameServerLookup(ctx, r.Addr, master) &&
				(r.MasterAddr == "" || c.compareServers(ctx, r.MasterAddr, master) != addrkey.Different)
		})
	}
	wg.Wait()
	var out []string
	for i, r := range reps {
		if keep[i] {
			out = append(out, r.Addr)
		}
	}
	return out
}

// servingReplicas returns the addresses of the replicas that serve the
// reads of shard sh now.
func (c *Client) servingReplicas(sh *sentShard) map[string]bool {
	out := map[string]bool{}
	if p := sh.replicas.Load(); p != nil {
		for _, r := range *p {
			out[c.nodes.get(int(r)).node.Addr] = true
		}
	}
	return out
}

// replicaName is the node name of the shard's replica at addr, under
// which it serves the shard's reads (Stats, the hooks' events).
func (sh *sentShard) replicaName(addr string) string {
	return sh.cfg.Name + " replica " + addr
}

// syncedReplicas returns those of addrs (in order) that say, with ROLE,
// that they are replicas of master whose link to it is up, asked in
// parallel. A replica that names its master under a spelling a lookup
// could not tie to master (addrkey.Unknown: the resolver failed, or is
// slow) stays when it serves reads now (serving, by address), and is
// not taken on otherwise.
func (c *Client) syncedReplicas(ctx context.Context, addrs []string, master string, serving map[string]bool) []string {
	ok := make([]bool, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Go(func() {
			role, err := c.roleOf(ctx, a)
			// A full pool (MaxActive borrowed, no Pool.Wait) means reads
			// are being served there now: no verdict against it.
			if errors.Is(err, redis.ErrPoolExhausted) {
				ok[i] = true
				return
			}
			if err == nil {
				v := c.replicaMatch(ctx, role, master)
				ok[i] = v == addrkey.Same || v == addrkey.Unknown && serving[a]
			}
		})
	}
	wg.Wait()
	var out []string
	for i, a := range addrs {
		if ok[i] {
			out = append(out, a)
		}
	}
	return out
}

// checkReplicaRole runs after a successful health check of node i: when
// it is a replica that serves reads of Sentinel shards, it must still
// say with ROLE that it replicates each such shard's master with its link
// up, or it serves no more reads of that shard until a query finds it
// synced (dropReplica). A replica that restarted between two health
// checks, while no read failed on it, comes back empty and answers the
// health PING over a new connection (the pool drops those the restart
// closed without a word); only its ROLE tells. Every shard whose list
// holds the replica is checked, not only the one that listed it last: a
// replica re-pointed to another master set is on both lists for a while.
func (c *Client) checkReplicaRole(i int) {
	if c.sent == nil || !c.sent.readers {
		return
	}
	if i >= 0 && i < len(c.sent.byMaster) && c.sent.byMaster[i] != nil {
		return // a shard's master node
	}
	var serving []*sentShard
	for _, sh := range c.sent.shards {
		if p := sh.replicas.Load(); p != nil && slices.Contains(*p, int32(i)) {
			serving = append(serving, sh)
		}
	}
	if len(serving) == 0 {
		return // not serving reads now
	}
	ctx, cancel := context.WithTimeout(c.life, c.health.Timeout) // Close cuts it short
	defer cancel()
	role, err := c.roleOf(ctx, c.nodes.get(i).node.Addr)
	if err != nil && (c.closed.Load() || ctx.Err() != nil || errors.Is(err, redis.ErrPoolExhausted)) {
		return // cut short, or no connection free: no verdict
	}
	for _, sh := range serving {
		m := sh.master.Load()
		if err != nil || m == nil {
			sh.dropReplica(i)
			continue
		}
		// A replica that names its master under a spelling that a lookup
		// could not tie to the shard's master in time (addrkey.Unknown)
		// keeps serving: no verdict, and the lookup's answer is kept for
		// the next check.
		if c.replicaMatch(ctx, role, *m) == addrkey.Different {
			sh.dropReplica(i)
		}
	}
}

// replicaMatch reports whether role is that of a replica of master whose
// link to it is up (Same). A replica of another server (made so by hand,
// or by a stale configuration) holds that server's data, while the
// Sentinels, which read a replica's INFO every 10s, may still list it
// under master. The replica may name its master otherwise than the
// Sentinels do (an address against an announced host name): the two are
// compared as compareServers does, within ctx, and Unknown is the answer
// when a lookup could not tell. Different also when role is not that of
// a replica with its link up.
func (c *Client) replicaMatch(ctx context.Context, role sentinel.Role, master string) addrkey.Match {
	if role.Kind != sentinel.RoleReplica || role.State != replicaLinkUp {
		return addrkey.Different
	}
	return c.compareServers(ctx, role.MasterAddr, master)
}

// sameServer reports whether host:port addresses a and b name the same
// server, also under two spellings (serverKeys: 127.0.0.1 and
// ::ffff:127.0.0.1, localhost, the case of a host name).
func sameServer(a, b string) bool {
	if a == b {
		return true
	}
	kb := serverKeys(b)
	for _, k := range serverKeys(a) {
		if slices.Contains(kb, k) {
			return true
		}
	}
	return false
}

// sameServerLookup is sameServer that also looks up a host name (other
// than localhost) when the two addresses do not match otherwise and
// have one port, within ctx and the dial timeout: a Sentinel that
// announces host names names the master "redis-1:P", another
// "10.0.0.1:P", and a replica its master "10.0.0.1:P". Every comparison
// of a Sentinel shard's master with another spelling goes through it.
func (c *Client) sameServerLookup(ctx context.Context, a, b string) bool {
	return c.compareServers(ctx, a, b) == addrkey.Same
}

// compareServers is sameServerLookup that also tells when the answer is
// not known (addrkey.Unknown): a lookup needed to tell failed, or did not
// end within ctx and the dial timeout (it goes on in the background, and
// its answer is kept for the next comparison).
func (c *Client) compareServers(ctx context.Context, a, b string) addrkey.Match {
	if sameServer(a, b) {
		return addrkey.Same
	}
	ctx, cancel := context.WithTimeout(ctx, c.dialTimeout())
	defer cancel()
	return addrkey.Compare(ctx, a, b)
}

// replicaLinkUp is the state ROLE reports for a replica once its link to
// the master is up and the initial sync has been loaded.
const replicaLinkUp = "connected"

// dropReplica stops reads going to the replica at node index node until
// a query lists it again (loadReplicas checks it then), and asks for that
// query: a read failed there, and a replica that restarts comes back
// empty.
func (sh *sentShard) dropReplica(node int) {
	sh.repMu.Lock()
	sh.repDrops++
	if p := sh.replicas.Load(); p != nil && slices.Contains(*p, int32(node)) {
		idx := slices.DeleteFunc(slices.Clone(*p), func(r int32) bool { return int(r) == node })
		sh.replicas.Store(&idx)
	}
	sh.repMu.Unlock()
	sh.request()
}

// failedSinceCheck reports whether the replica at node index r failed (a
// command, a health check) since the query that checked it, seen being
// the failure counts that query read (repSeen).
func (c *Client) failedSinceCheck(seen *map[int32]int64, r int32) bool {
	if seen == nil {
		return false
	}
	base, ok := (*seen)[r]
	return ok && c.nodes.get(int(r)).errors.Load() > base
}
