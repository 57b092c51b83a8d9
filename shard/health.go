package shard

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard/command"
)

// healthLoop PINGs every node of the current topology each interval
// until Close.
func (c *Client) healthLoop() {
	defer c.bg.Done()
	t := time.NewTicker(c.health.Interval)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			// The tick runs the program's code (a Router, hooks), each
			// call guarded; run as a callback itself, a panic of code
			// that is not (a migration's Router) ends the tick, not the
			// process, and a Close from it does not wait for this loop.
			callUser0(c, "health check", c.healthTick)
		}
	}
}

// healthTick is one round of healthLoop.
func (c *Client) healthTick() {
	c.settleNodes() // a topology change no install told of (nodes.go)
	c.checkAll()
	if c.cl() == nil {
		return
	}
	if c.refreshTicks.Load() > 0 {
		c.refreshTicks.Add(-1)
		c.refresh(context.Background(), false)
		return
	}
	c.refreshWhileDown()
}

// downRefreshEvery is the least time between the topology refreshes that
// refreshWhileDown asks for: the first one, and the next after the
// topology changed or the set of nodes marked down did.
const downRefreshEvery = 5 * time.Second

// downBackoff is refreshWhileDown's state: the interval between its
// refreshes, and what it last saw (the table in use, the nodes marked
// down) to tell whether anything changed since.
type downBackoff struct {
	every time.Duration // the interval now; 0 before the first
	state *clusterState // the table in use when last looked at
	down  []*nodeState  // the nodes marked down then, in table order
}

// refreshWhileDown refreshes a cluster's topology every few health ticks
// (downRefreshEvery, at least 3 ticks) while a node the client keeps is
// marked down. A node that failed may come back at another address (the
// same node ID on a new port: an old master rejoining as a replica), and
// its old address then never answers a health check, the only thing that
// would refresh the topology for it: while nothing the client sends
// reaches the node (a replica, a master whose slots see no traffic) the
// old address stayed listed, down, and replica reads left the new one
// out, until the periodic refresh (RefreshInterval, 60 s by default).
// The refresh asks the nodes that are up first, and is rate-limited as
// any. Run by the health loop only.
//
// The interval doubles after each of these refreshes, up to
// RefreshInterval (60 s when the periodic refresh is off), and goes back
// to downRefreshEvery as soon as the table in use changes (a refresh of
// any kind installed another one, a MOVED was applied) or the set of nodes
// marked down does: a dead node that the cluster keeps listing (one that
// no CLUSTER FORGET removed) otherwise cost a full topology query every
// 5 s for the life of the process. A node that comes back soon after it
// failed (its failover changed the table, which starts the interval
// again) is still found within seconds; one that comes back later, by the
// next of these refreshes, within RefreshInterval at worst.
func (c *Client) refreshWhileDown() {
	var down []*nodeState
	for _, ns := range c.nodes.all() {
		if ns.down.Load() && !ns.retired.Load() {
			down = append(down, ns)
		}
	}
	b := &c.downBackoff
	if len(down) == 0 {
		c.downTicks = 0
		*b = downBackoff{}
		return
	}
	var st *clusterState
	if r := c.cl(); r != nil {
		st = r.state.Load()
	}
	if b.every == 0 || st != b.state || !slices.Equal(down, b.down) {
		b.every = downRefreshEvery
		b.state, b.down = st, down
	}
	c.downTicks++
	every := max(int((b.every+c.health.Interval-1)/c.health.Interval), 3)
	if c.downTicks < every {
		return
	}
	c.downTicks = 0
	ceiling := c.clusterOpts().RefreshInterval
	if ceiling <= 0 {
		ceiling = time.Minute // the periodic refresh is off
	}
	b.every = max(min(2*b.every, ceiling), downRefreshEvery)
	c.refresh(context.Background(), false)
}

// checkAll PINGs every node that is not retired (one that left the
// topology: nodes.go) in parallel and waits for the answers.
func (c *Client) checkAll() {
	nodes := c.nodes.all()
	done := make(chan struct{}, len(nodes))
	n := 0
	for i, ns := range nodes {
		if ns.retired.Load() {
			continue
		}
		n++
		go func(i int) {
			c.probe(i)
			done <- struct{}{}
		}(i)
	}
	for range n {
		<-done
	}
}

// probe PINGs node i once and records the outcome.
func (c *Client) probe(i int) {
	ns := c.nodes.get(i)
	ctx, cancel := context.WithTimeout(c.life, c.health.Timeout) // Close cuts it short
	defer cancel()
	start := time.Now()
	err := c.ping(ctx, ns)
	if err != nil {
		if c.closed.Load() || errors.Is(err, errPoolBusy) {
			return // cut short by Close, or no connection free: no verdict
		}
		c.noteFailureOf(context.Background(), i, healthTimeout(err, c.health.Timeout), true)
		return
	}
	rtt := int64(time.Since(start))
	if old := ns.rtt.Load(); old != 0 {
		rtt = (old*7 + rtt) / 8
	}
	ns.rtt.Store(rtt)
	c.noteSuccess(i)
	c.checkReplicaRole(i)
}

// errPoolBusy is ping's error when every connection the pool may open
// (MaxActive) stayed busy for the whole health timeout: that says nothing
// about the node.
var errPoolBusy = errors.New("shardis: no pooled connection free for the health check")

func (c *Client) ping(ctx context.Context, ns *nodeState) error {
	conn, abort, err := c.pools.GetAbortable(ctx, ns.node.Addr, ns.readOnly)
	if err != nil {
		var de *pool.DialError
		if errors.As(err, &de) || errors.Is(err, pool.ErrAuth) {
			return err
		}
		return errPoolBusy
	}
	defer conn.Close()
	t := c.health.Timeout
	if dl, ok := ctx.Deadline(); ok {
		t = time.Until(dl)
	}
	if t <= 0 {
		return context.DeadlineExceeded
	}
	err = c.healthCheck(ctx, conn, ns, t)
	if _, ok := err.(*PanicError); ok {
		abort() // the check stopped anywhere: the connection's state is unknown
	}
	if c.health.Check == nil && pingRefused(err) {
		// The server answered, in its normal state: PING is only not
		// allowed to this user (an ACL without +ping) or renamed away.
		// Counted as a failure, it marked a node that serves every
		// command down for good (no PING would ever bring it back).
		return nil
	}
	return c.authReply(ns.node.Addr, err)
}

// pingRefused reports whether err is a server's refusal of the PING
// command itself (NOPERM, or an unknown command), as opposed to a refusal
// of the connection (NOAUTH, WRONGPASS) or a state that keeps the node
// from serving (LOADING, BUSY, MASTERDOWN, ...).
func pingRefused(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	s := string(re)
	return strings.HasPrefix(s, "NOPERM") || strings.HasPrefix(s, "ERR unknown command")
}

// noteFailure counts a connection-level failure of node i; enough of them
// in a row mark it down. A failure caused by the caller's own context is
// not the node's fault and is not counted.
func (c *Client) noteFailure(ctx context.Context, i int, err error) {
	c.noteFailureOf(ctx, i, err, false)
}

// noteFailureOf is noteFailure; probe says a health check failed.
func (c *Client) noteFailureOf(ctx context.Context, i int, err error, probe bool) {
	if errors.Is(err, redis.ErrPoolExhausted) {
		return // MaxActive connections busy: the node is not at fault
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		if ctx.Err() != nil {
			return
		}
		if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
			return
		}
	}
	ns := c.nodes.get(i)
	ns.errors.Add(1)
	wasOut := ejectFor(ns.downCause())
	ns.noteCause(err)
	c.reejectFor(i, ns, wasOut)
	if !probe && isTimeout(err) {
		// A command that outlived its read timeout may only be slow (a
		// server holding writes, a slow script): its timeouts, however
		// many run at once, are no verdict; the health check's PING is.
		return
	}
	if ns.fails.Load() == 0 {
		// The first failure in a row: the idle connections to this node
		// are likely dead too (a restarted or killed server). Drop them so
		// the next callers dial afresh instead of each failing on one; the
		// pool stays, so that MaxActive still counts the connections
		// borrowed now.
		c.pools.DropIdle(ns.node.Addr)
	}
	c.countFailure(i, ns, err)
}

// noteUnserving records that node i answered a command with a reply that
// says it cannot serve, in a state that lasts and that its health check's
// PING meets too (LOADING, MASTERDOWN: see cannotServe). For the node's
// state it counts as a failed health check: such replies are no proof
// that the node answers (noteSuccess), which kept a loading master under
// traffic from ever being marked down. It is no connection failure, so
// Stats.Errors does not count it and the idle connections stay.
func (c *Client) noteUnserving(i int, err error) {
	ns := c.nodes.get(i)
	wasOut := ejectFor(ns.downCause())
	ns.noteCause(err)
	c.reejectFor(i, ns, wasOut)
	c.countFailure(i, ns, err)
}

// cannotServe reports whether re says that its node cannot serve in a
// state that lasts: loading its data, or a replica cut off from its
// master that serves no stale data.
func cannotServe(re redis.Error) bool {
	s := string(re)
	return strings.HasPrefix(s, "LOADING") || strings.HasPrefix(s, "MASTERDOWN")
}

// busyScript reports whether re is a BUSY reply: the server is running
// a script (or function) longer than its busy-reply-threshold and
// refuses everything else until it ends or is killed. It is the caller's
// own error reply, no failure of the node, but no proof that the node
// serves either: counted as an answer, every command kept busy on a
// server stuck in a script reset the count of its health checks, whose
// PINGs meet BUSY too, so that it was never marked down under traffic
// while an idle one was. BUSYKEY and BUSYGROUP are ordinary answers.
func busyScript(re redis.Error) bool {
	s := string(re)
	return s == "BUSY" || strings.HasPrefix(s, "BUSY ")
}

// txAnswers is what the replies read on a transaction's connection (a
// Client.Tx's, a Conn's pinned one) in one round trip say of its node. A
// LOADING or MASTERDOWN reply (the reply to a queued command, or to
// EXEC) counts as a failure of the node (noteUnserving), whatever else
// the node answered. The OK that a node which cannot serve gives WATCH,
// MULTI or EXEC (servesWhileUnserving) proves nothing: counted as an
// answer, the WATCH of every transaction reset the count of failures,
// and a loading master that only transactions used was never marked
// down. A BUSY reply counts neither way (busyScript). Any other reply,
// an error one included, is an answer of the node, unless a NOAUTH or
// WRONGPASS came (refused: counted by replyError).
type txAnswers struct {
	answered  bool
	refused   bool
	unserving error
}

// reply records the reply to the command name: err is nil, or its error
// reply (after replyError or authReply: an authentication failure is
// refused).
func (a *txAnswers) reply(name string, err error) {
	var re redis.Error
	switch {
	case errors.As(err, &re) && cannotServe(re):
		if a.unserving == nil {
			a.unserving = re
		}
	case isAuthFailure(err):
		a.refused = true
	case errors.As(err, &re) && busyScript(re):
		// neither an answer nor a failure (busyScript)
	case !servesWhileUnserving(name):
		a.answered = true
	}
}

// note records the verdict of the replies on node i.
func (a *txAnswers) note(c *Client, i int) {
	switch {
	case a.unserving != nil:
		c.noteUnserving(i, a.unserving)
	case a.answered && !a.refused:
		c.noteSuccess(i)
	}
}

// replyProves reports whether a reply to cl (or to one of the commands
// written with it, pre: a transaction's) proves that its node serves: not
// when each of them is one a server answers even while it cannot serve
// (servesWhileUnserving: SPUBLISH, PUBLISH, ECHO, INFO, TIME, ...).
// Counted as answers, the replies of a loading master to its callers'
// SPUBLISH reset the health checks' count of failed PINGs, and the master
// was never marked down.
func replyProves(cl *call, pre []*call) bool {
	if !servesWhileUnservingInfo(cl.info, cl.name) {
		return true
	}
	for _, p := range pre {
		if !servesWhileUnservingInfo(p.info, p.name) {
			return true
		}
	}
	return false
}

// servesWhileUnservingInfo is servesWhileUnserving for a command whose
// info may be known already.
func servesWhileUnservingInfo(info *command.Info, name string) bool {
	if info == nil {
		return servesWhileUnserving(name)
	}
	return info.Flags&(command.Loading|command.Stale) != 0
}

// servesWhileUnserving reports whether a server answers the command name
// even while loading its data or cut off from its master (flagged
// loading or stale: WATCH, MULTI, EXEC, ...): its reply is no proof that
// the node serves.
func servesWhileUnserving(name string) bool {
	info := command.Lookup(name)
	return info != nil && info.Flags&(command.Loading|command.Stale) != 0
}

// countFailure counts one failure in a row of node i, and marks it down
// at HealthOptions.FailureLimit.
func (c *Client) countFailure(i int, ns *nodeState, err error) {
	// Without background probes nothing would bring a node back, so
	// nodes are marked down only when health checks run, and never while
	// retired (left every topology: not checked; settleNodes).
	if int(ns.fails.Add(1)) >= c.health.FailureLimit && c.health.Interval > 0 && !ns.down.Load() && !ns.retired.Load() {
		ns.trans.Lock()
		down := ns.fails.Load() > 0 && !ns.retired.Load() && !ns.down.Swap(true) // no success came in between
		if down {
			c.queueNodeEvent(NodeDown, i, err)
			c.nodeDown(i)
		}
		ns.trans.Unlock()
		if down {
			c.wentDown(i)
		}
	}
}

// markDown marks node i down at once for err, a reply that says the node
// cannot serve in a state that lasts and that its health check's PING
// meets too (a replica loading its data, or cut off from its master):
// the health checks, which the first PING it answers ends, would mark it
// down after FailureLimit ticks anyway. Without health checks nothing
// would bring it back, and it is left as it is.
func (c *Client) markDown(i int, err error) {
	ns := c.nodes.get(i)
	if c.health.Interval <= 0 || ns.down.Load() || ns.retired.Load() {
		return
	}
	ns.trans.Lock()
	if ns.retired.Load() || ns.down.Load() {
		ns.trans.Unlock()
		return
	}
	ns.noteCause(err)
	ns.fails.Store(int32(max(c.health.FailureLimit, 1)))
	ns.down.Store(true)
	c.queueNodeEvent(NodeDown, i, err)
	c.nodeDown(i)
	ns.trans.Unlock()
	c.wentDown(i)
}

// noteSuccess records that node i answered.
func (c *Client) noteSuccess(i int) {
	ns := c.nodes.get(i)
	if ns.fails.Load() != 0 {
		ns.fails.Store(0)
	}
	// Read before it is cleared: a NodeDown still to report below
	// carries the failure that kept the node down, not a bare
	// ErrNodeDown.
	cause := ns.cause.Load()
	if cause != nil {
		ns.cause.Store(nil) // a later failure starts afresh
	}
	if ns.downRetired.Load() {
		ns.downRetired.Store(false) // it answered while retired
	}
	if !ns.down.Load() {
		return
	}
	ns.trans.Lock()
	up := ns.down.Swap(false)
	if up {
		if ns.downUnreported.Swap(false) {
			// Listed again while down, and not yet reported so
			// (reportRelistedDown): the NodeUp closes a NodeDown.
			err := error(ErrNodeDown)
			if cause != nil {
				err = cause.cause
			}
			c.queueNodeEvent(NodeDown, i, err)
		}
		c.queueNodeEvent(NodeUp, i, nil)
		c.nodeUp(i)
	}
	ns.trans.Unlock()
	if up {
		c.flushNodeEvents(i)
	}
}

// nodeDown does, under node i's trans, what follows its being marked
// down: in a ring with AutoEject, the ejection (in order with a restore
// by a success that follows), unless the node is down for refusing the
// client's credentials (ejectFor).
func (c *Client) nodeDown(i int) {
	if c.ring != nil && c.health.AutoEject {
		c.setAutoEjected(i, ejectFor(c.nodes.get(i).downCause()))
	}
}

// ejectFor reports whether AutoEject takes out a shard down for cause: not
// when its server refused the client's credentials (NOAUTH, WRONGPASS, a
// disabled ACL user), nor when its certificate failed verification (an
// authority the client does not trust, a name it does not carry), nor
// when its ACL refused the health check's command (NOPERM: a
// HealthOptions.Check reading INFO for a user without +info).
// Such a shard is reachable and misconfigured, not gone: ejected, its keys
// went to the other shards, and a configuration error silently split the
// data set, while its commands, which should say what is wrong
// (pool.ErrAuth, the NOPERM reply), ran elsewhere.
func ejectFor(cause error) bool { return !isConfigFailure(cause) && !aclRefused(cause) }

// aclRefused reports whether err is a server's NOPERM reply.
func aclRefused(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(string(re), "NOPERM")
}

// setAutoEjected takes ring node i out (out) or puts it back by
// AutoEject, and queues the NodeEjected or NodeRestored of a change. The
// caller holds node i's trans.
func (c *Client) setAutoEjected(i int, out bool) {
	changed, err := c.ring.setEjected(i, out, false)
	if !changed || err != nil {
		return
	}
	if out {
		c.queueNodeEvent(NodeEjected, i, nil)
	} else {
		c.queueNodeEvent(NodeRestored, i, nil)
	}
}

// reejectFor keeps, in a ring with AutoEject, the ejection of node i,
// marked down already, in line with why it is down when the failure just
// noted changed that (ejectFor of the cause before, wasOut, and now): a
// shard ejected for an outage that comes back refusing the client's
// credentials goes back into the ring, its commands failing with
// pool.ErrAuth; one kept in for refusing them that then cannot be reached
// is taken out. Failures that change nothing of it leave the ring as it
// is: a shard restored by hand while down stays in (RingRouter.Restore).
func (c *Client) reejectFor(i int, ns *nodeState, wasOut bool) {
	if c.ring == nil || !c.health.AutoEject || !ns.down.Load() || ejectFor(ns.downCause()) == wasOut {
		return
	}
	ns.trans.Lock()
	if ns.down.Load() && !ns.retired.Load() {
		c.setAutoEjected(i, ejectFor(ns.downCause()))
	}
	ns.trans.Unlock()
	c.flushNodeEvents(i)
}

// wentDown does, once node i's trans is released, what follows its
// being marked down: its events go to the NodeState hook, then a
// cluster's topology is refreshed (after the NodeDown: a failover's
// ReplicaPromoted follows it).
func (c *Client) wentDown(i int) {
	c.flushNodeEvents(i)
	if c.cl() != nil {
		c.refresh(context.Background(), false)
	}
}

// nodeUp does, under node i's trans, what follows its being marked up.
func (c *Client) nodeUp(i int) {
	if c.cl() != nil {
		// A node that comes back (a restarted master rejoining as a
		// replica, say) takes a moment to show in the topology: look on
		// the next few health ticks.
		ticks := int32(3 * time.Second / c.health.Interval)
		c.refreshTicks.Store(max(ticks, 3))
	}
	if c.ring != nil && c.health.AutoEject {
		c.setAutoEjected(i, false)
	}
}
