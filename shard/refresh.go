package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
)

// refresher coalesces topology refreshes: at most one is in flight, and a
// new one starts only when the last one started at least MinRefreshInterval
// ago. A failed refresh keeps the current table.
type refresher struct {
	mu      sync.Mutex
	running chan struct{} // closed when the refresh in flight ends; nil when none
	last    time.Time     // when the last refresh started
	count   atomic.Int64  // refreshes that ran
	// otherCluster counts the topology answers that came from another
	// cluster (askTopology): refused, or taken from a seed (switches).
	otherCluster atomic.Int64
	// switches counts the answers of another cluster installed
	// (discover): the client follows that cluster since.
	switches atomic.Int64
	lastErr  atomic.Pointer[error]
	// owed: a refresh was asked for within MinRefreshInterval of the
	// last one and held back; a timer (armed: one is pending) runs it
	// once the interval has passed, so that what the asker saw (a MOVED
	// to a new master, say) is not left to the next periodic refresh,
	// with or without health checks.
	owed  atomic.Bool
	armed bool // guarded by mu
	// again: a refresh was asked for while one was in flight, whose
	// answer may predate what the asker saw (a MOVED applied meanwhile
	// and then overwritten by that answer); one more runs after it
	// (guarded by mu).
	again bool
}

// refresh asks for a topology refresh. With wait it returns when the
// refresh in flight (or the one it started) has ended, or ctx is done;
// otherwise it returns at once.
func (c *Client) refresh(ctx context.Context, wait bool) {
	rf := &c.refr
	rf.mu.Lock()
	ch := rf.running
	if since := time.Since(rf.last); ch == nil && since < c.clusterOpts().MinRefreshInterval {
		rf.owed.Store(true)
		if !rf.armed {
			rf.armed = c.goTracked(&c.bg, func() { c.runOwed(c.clusterOpts().MinRefreshInterval - since) })
		}
	} else if ch != nil {
		rf.again = true
	} else {
		ch = make(chan struct{})
		rf.running = ch
		rf.last = time.Now()
		rf.owed.Store(false)
		started := c.goTracked(&c.inflight, func() {
			err := c.observeRefresh(c.life, c.discover) // Close cuts it short
			rf.count.Add(1)
			if err != nil {
				rf.lastErr.Store(&err)
			}
			rf.mu.Lock()
			rf.running = nil
			again := rf.again
			rf.again = false
			rf.mu.Unlock()
			close(ch)
			if again {
				c.refresh(context.Background(), false) // rate-limited as any
			}
		})
		if !started { // closing: nothing to refresh for
			rf.running = nil
			close(ch)
		}
	}
	rf.mu.Unlock()
	if !wait || ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// runOwed waits d (or until Close), then runs the refresh that the rate
// limit held back, unless one has started since.
func (c *Client) runOwed(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.stop:
	case <-t.C:
	}
	rf := &c.refr
	rf.mu.Lock()
	rf.armed = false
	rf.mu.Unlock()
	if rf.owed.Load() && !c.closed.Load() {
		c.refresh(context.Background(), false)
	}
}

// refreshOutcome is what one discovery did, for its RefreshEvent.
type refreshOutcome struct {
	// installed: the answer differed from the table in use, and no
	// later discovery had installed its own first.
	installed bool
	// otherCluster counts the answers of another cluster this discovery
	// met; switched says it installed one.
	otherCluster int
	switched     bool
}

// discover asks the known nodes not marked down, then the seeds, then the
// nodes marked down, for the topology and installs the first good answer.
// out says what this discovery itself did, whatever others did
// meanwhile.
func (c *Client) discover(ctx context.Context) (out refreshOutcome, err error) {
	r := c.cl()
	if r == nil {
		return out, nil // a migration took the client back to a ring
	}
	var addrs []string
	var seen map[string]bool
	st := r.state.Load()
	if st != nil {
		addrs = make([]string, 0, len(st.allNodes)+len(r.seeds))
		seen = make(map[string]bool, len(st.allNodes)+len(r.seeds))
	} else {
		seen = map[string]bool{}
	}
	addAddr := func(a string) {
		if !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	// Nodes not marked down first: a dead master would only cost time.
	// Those marked down come last, when neither they nor the seeds
	// answered: a node back since the last health check answers already
	// (every node down, all but the seeds back: the refresh failed for a
	// whole health interval, and a Scan with it). A replica's health is
	// that of its read-only entry: it has no plain one (or one left from
	// when it was a master, no longer checked).
	var down []string
	if st != nil {
		for k, n := range st.allNodes {
			lookup := c.nodes.lookup
			if k >= len(st.masters) {
				lookup = c.nodes.lookupReadOnly
			}
			if i, ok := lookup(n.Addr); !ok || !c.nodes.get(i).down.Load() {
				addAddr(n.Addr)
			} else {
				down = append(down, n.Addr)
			}
		}
	}
	for _, s := range r.seeds {
		addAddr(s)
	}
	for _, a := range down {
		addAddr(a)
	}
	parent := ctx
	ticket := r.asked.Add(1)
	ctx, cancel := context.WithTimeout(ctx, 2*c.dialTimeout()+c.readTimeout)
	defer cancel()
	var known *cluster.Table
	if st != nil {
		known = st.table
	}
	isSeed := func(a string) bool { return slices.Contains(r.seeds, a) }
	t, foreign, err := c.askTopology(ctx, addrs, known, isSeed)
	out.otherCluster = foreign.refused
	if err != nil {
		return out, errtext.Errorf("shardis: cluster topology: %w", err)
	}
	r.installMu.Lock()
	if ticket < r.newest {
		// A discovery that asked after this one has installed its
		// answer, which is the newer view.
		r.installMu.Unlock()
		return out, nil
	}
	r.newest = ticket
	var old *cluster.Table
	var changed bool
	for {
		cur := r.state.Load()
		old = nil
		if cur != nil {
			old = cur.table
		}
		if h := testHookBeforeInstall.Load(); h != nil {
			(*h)(c)
		}
		// Equal ignores masters without slots and replicas unfit for
		// reads: a table that gained or lost one routes alike, but its
		// nodes are the ones the client checks and reports
		// (settleNodes).
		changed = old == nil || !old.Equal(t) || !sameNodeAddrs(old, t)
		if !changed {
			break
		}
		r.pendFailed(old, t) // cluster_failed.go
		// Only over the table compared with: a MOVED applied meanwhile
		// (applyMoved does not wait for installMu) has reported its
		// slot; compared with its table, the change reported below is
		// this refresh's alone.
		if r.installOver(cur, t) {
			break
		}
	}
	if foreign.taken && changed {
		c.refr.switches.Add(1)
		out.switched = true
	}
	r.installMu.Unlock()
	if changed {
		c.slotMapChanged(r)
	} else {
		t = old
	}
	if h := testHookBeforeKeepFailed.Load(); h != nil {
		(*h)(c)
	}
	// Nodes that left retire, those back return (nodes.go); failed ones
	// stay until the cluster forgets them (cluster_failed.go).
	if kept := c.keepFailed(parent, r, old, t); changed || kept { // its own time bound
		c.settleNodes()
	}
	out.installed = changed
	return out, nil
}

// hedgeDelay is how long askTopology waits for a node's answer before it
// asks the next node as well.
const hedgeDelay = 100 * time.Millisecond

// askTopology asks addrs for the topology, in order, and returns the first
// usable answer: one of the cluster of known, the table in use (see
// sameCluster; any answer when known is nil, at the first discovery). An
// answer of another cluster (an address of known's that a node of another
// cluster took over) counts as a failure of its node, an
// cluster.ErrOtherCluster, and is taken only when no node answers for
// known's cluster and it came from a seed (isSeed), the addresses the
// program named: so a cluster replaced as a whole, every node, is
// followed, not a stray node of another cluster; foreign counts those
// answers (with an error as well) and says whether one was taken. A node
// that fails makes it ask the next one at once; a node that has not
// answered within hedgeDelay, the next one as well,
// while it keeps waiting for the first. Each node has its own bound (a
// dial timeout and a read timeout), within ctx's: a hung node (one that
// accepts connections and never answers: a frozen host, a partition that
// drops packets) costs the others hedgeDelay, not its whole read timeout
// of the refresh's budget, which a few hung nodes used to spend before
// the nodes that answer were asked. When no node gives a usable answer,
// the error joins one *cluster.SeedError per node asked, as
// cluster.Discover's does.
func (c *Client) askTopology(ctx context.Context, addrs []string, known *cluster.Table, isSeed func(string) bool) (t *cluster.Table, foreign foreignAnswers, err error) {
	if len(addrs) == 0 {
		return nil, foreign, cluster.ErrNoSeeds
	}
	discover := c.discoverFunc()
	perNode := c.dialTimeout() + c.readTimeout
	ctx, cancel := context.WithCancel(ctx)
	type answer struct {
		i   int
		t   *cluster.Table
		err error
	}
	answers := make(chan answer, len(addrs))
	var wg sync.WaitGroup
	defer func() {
		cancel() // the nodes still asked give up at once
		wg.Wait()
	}()
	next, running := 0, 0
	ask := func() {
		i := next
		next++
		running++
		wg.Add(1)
		go func() {
			defer wg.Done()
			nctx, ncancel := context.WithTimeout(ctx, perNode)
			defer ncancel()
			t, err := discover(nctx, addrs[i:i+1], c.topologyDialer)
			answers <- answer{i: i, t: t, err: err}
		}()
	}
	errs := make([]error, len(addrs))
	var other *cluster.Table   // the first answer of another cluster from a seed
	var partial *cluster.Table // the first incomplete answer of this cluster, filled
	hedge := time.NewTimer(hedgeDelay)
	defer hedge.Stop()
	ask()
	for running > 0 {
		select {
		case a := <-answers:
			running--
			if a.err == nil {
				if sameCluster(known, a.t) {
					return a.t, foreign, nil
				}
				a.err = otherClusterError(known, a.t)
				c.refr.otherCluster.Add(1)
				foreign.refused++
				if other == nil && isSeed(addrs[a.i]) {
					other = a.t
				}
			}
			if partial == nil {
				partial = fillIncomplete(known, a.err)
			}
			var se *cluster.SeedError
			if errors.As(a.err, &se) {
				errs[a.i] = se
			} else {
				errs[a.i] = &cluster.SeedError{Seed: addrs[a.i], Err: a.err}
			}
			if next < len(addrs) && ctx.Err() == nil {
				ask()
				hedge.Reset(hedgeDelay)
			}
		case <-hedge.C:
			if next < len(addrs) && ctx.Err() == nil {
				ask()
				hedge.Reset(hedgeDelay)
			}
		}
	}
	if partial != nil {
		return partial, foreign, nil // slots without owner: the rest is followed
	}
	if other != nil {
		foreign.taken = true
		return other, foreign, nil // no node of the known cluster answered
	}
	tried := next
	errs = errs[:tried]
	if err := ctx.Err(); err != nil && tried < len(addrs) {
		errs = append(errs, fmt.Errorf("shardis: discovery stopped: %w", err))
	}
	return nil, foreign, errtext.Errorf("shardis: no node gave a usable cluster topology (%d of %d tried):\n%w",
		tried, len(addrs), errors.Join(errs...))
}

// fillIncomplete turns err, a node's answer that leaves slots without
// owner (a *cluster.IncompleteError: a cluster that serves with
// cluster-require-full-coverage no while a slot is unassigned), into a
// table to use when no node gives a complete one: the slots without owner
// stay with their owner in known, the table in use, whose master answers
// them with CLUSTERDOWN (or MOVED once the slot has an owner again). So
// the client keeps following the rest of the cluster (a failover, a
// resharding); it used to refuse every such answer and keep its table
// for as long as the slot had no owner, routing a failed master's slots
// to it for good. It returns nil at the first discovery (known is nil),
// for any other error, and for an answer of another cluster.
func fillIncomplete(known *cluster.Table, err error) *cluster.Table {
	var ie *cluster.IncompleteError
	if known == nil || !errors.As(err, &ie) {
		return nil
	}
	t, ferr := ie.Fill(known)
	if ferr != nil || !sameCluster(known, t) {
		return nil
	}
	return t
}

// foreignAnswers is what askTopology met of another cluster.
type foreignAnswers struct {
	// refused counts the answers of another cluster, each a node's
	// failure (the one then taken, if any, as well).
	refused int
	// taken: one of them is the answer returned.
	taken bool
}

// sameCluster reports whether answer may be taken as a view of the
// cluster of known: it names at least one node (by cluster node ID) that
// known names. A node ID is random and never reused, so an answer of
// another cluster shares none, while one of the same cluster shares at
// least the node that gave it or, after a whole shard was replaced, the
// nodes of the others. With no known table (the first discovery), or
// when either table has no IDs (CLUSTER SLOTS of old servers), there is
// nothing to compare and every answer is taken.
func sameCluster(known, answer *cluster.Table) bool {
	if known == nil {
		return true
	}
	kn := known.Nodes()
	ids := make(map[string]bool, len(kn))
	for _, n := range kn {
		if n.ID != "" {
			ids[n.ID] = true
		}
	}
	if len(ids) == 0 {
		return true
	}
	withIDs := false
	for _, n := range answer.Nodes() {
		if n.ID == "" {
			continue
		}
		if ids[n.ID] {
			return true
		}
		withIDs = true
	}
	return !withIDs
}

// otherClusterError is the failure of a node whose answer is of another
// cluster than known's.
func otherClusterError(known, answer *cluster.Table) error {
	return fmt.Errorf("%w: its %d nodes (masters %s) share no node ID with the %d of the table in use (masters %s)",
		cluster.ErrOtherCluster, len(answer.Nodes()), mastersText(answer), len(known.Nodes()), mastersText(known))
}

// mastersText lists a table's masters' addresses, at most three.
func mastersText(t *cluster.Table) string {
	var b strings.Builder
	ms := t.Masters()
	for i, m := range ms {
		if i == 3 {
			fmt.Fprintf(&b, " and %d more", len(ms)-3)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m.Addr)
	}
	return b.String()
}

// sameNodeAddrs reports whether a and b list the same node addresses.
func sameNodeAddrs(a, b *cluster.Table) bool {
	an, bn := a.Nodes(), b.Nodes()
	if len(an) != len(bn) {
		return false
	}
	in := make(map[string]bool, len(an))
	for _, n := range an {
		in[n.Addr] = true
	}
	for _, n := range bn {
		if !in[n.Addr] {
			return false
		}
	}
	return true
}

// topologyDialer gives cluster.Discover pooled connections with a short
// per-node timeout, so a dead node does not hold discovery up.
func (c *Client) topologyDialer(ctx context.Context, addr string) (redis.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.dialTimeout())
	defer cancel()
	return c.pools.Get(ctx, addr)
}

func (c *Client) dialTimeout() time.Duration {
	d := c.pools.Options().DialTimeout
	if d > time.Second {
		d = time.Second
	}
	return d
}

// refreshLoop refreshes the topology every RefreshInterval until Close
// (startRefreshLoop starts it once, on c.bg). The interval is read each
// time: a migration into a cluster brings its own options.
func (c *Client) refreshLoop() {
	for {
		d := c.clusterOpts().RefreshInterval
		idle := d <= 0
		if idle {
			d = time.Second
		}
		t := time.NewTimer(d)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
			if !idle {
				c.refresh(context.Background(), false)
			}
		}
	}
}

// testHookBeforeInstall, when set (by tests), runs in a refresh when it
// has read the table in use and is about to compare its answer with it.
var testHookBeforeInstall atomic.Pointer[func(*Client)]

// testHookAfterMoved, when set (by tests), runs in applyMoved after it
// installed its table and before it reports the change.
var testHookAfterMoved atomic.Pointer[func(*Client)]

// applyMoved points slot at addr at once, before the full refresh that a
// MOVED also asks for.
func (c *Client) applyMoved(slot int, addr string) int {
	r := c.cl()
	if r == nil { // a migration took the client back to a ring meanwhile
		return c.nodes.add(Node{Name: addr, Addr: addr})
	}
	for {
		st := r.state.Load()
		if cur := int(st.master[slot]); c.nodes.get(cur).node.Addr == addr {
			return cur
		}
		// The new table is derived from st: it is installed only while st
		// is current, else a refresh that installed a newer table meanwhile
		// would be undone by this older view; then look again.
		t := st.table.WithSlotOwner(slot, addr)
		same := r.moveSlot(st, t, slot) // the same nodes: none joins or leaves
		if same || r.installOver(st, t) {
			r.migrating.clear(slot) // the migration ended: its replicas serve it
			if h := testHookAfterMoved.Load(); h != nil {
				(*h)(c)
			}
			// Reported from the map the last report ended at to the
			// map in use, which may already be a refresh's (events.go).
			c.slotMapChanged(r)
			if !same {
				c.settleNodes() // addr may be a node that left and is back
			}
			i, _ := c.nodes.lookup(addr)
			return i
		}
	}
}

// discoverFunc picks plain or TLS discovery: with TLS the topology's
// tls-port is the one to dial.
func (c *Client) discoverFunc() func(context.Context, []string, cluster.Dialer) (*cluster.Table, error) {
	if c.cfg.Pool.TLSConfig != nil {
		return cluster.DiscoverTLS
	}
	return cluster.Discover
}

// Refresh reloads the cluster topology now and waits for it, for example
// after resharding by hand. In ring mode with Sentinel shards it asks
// each shard's Sentinels for its master now (at most one query per
// SentinelOptions.MinRefreshInterval) and waits for the answers; the
// error then holds each shard whose Sentinels named no confirmed master
// (it matches sentinel.ErrNoSentinel; the shard keeps serving its last
// known master). In ring mode without Sentinel shards it does nothing.
func (c *Client) Refresh(ctx context.Context) error {
	if err := checkContext(ctx); err != nil {
		return err
	}
	if c.cl() == nil {
		if c.sent != nil {
			return c.refreshSentinels(ctx)
		}
		return nil
	}
	if c.closed.Load() {
		return ErrClosed
	}
	c.refr.count.Add(1)
	return c.observeRefresh(ctx, c.discover)
}
