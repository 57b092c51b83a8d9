package shard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard/command"
)

// RetryError reports a command that the cluster could not serve within
// the retry budget: too many MOVED/ASK hops (a redirect loop), or
// MaxRetryWait spent on CLUSTERDOWN, TRYAGAIN, LOADING or refused
// connections. Err is the last failure.
type RetryError struct {
	Command  string // the caller's command, e.g. "MGET" for a part of a split MGET
	Attempts int
	Last     string // the last redirect or error reply, e.g. "MOVED 3999 127.0.0.1:7001"
	Err      error
}

// Error implements error.
func (e *RetryError) Error() string {
	return fmt.Sprintf("shardis: %s: gave up after %d attempts; last: %s", e.Command, e.Attempts, errtext.Trim(e.Last))
}

// Unwrap returns the last failure.
func (e *RetryError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrRetryBudget) true.
func (e *RetryError) Is(target error) bool { return target == ErrRetryBudget }

// ErrRetryBudget is matched by every *RetryError.
var ErrRetryBudget = errors.New("shardis: retry budget exhausted")

// UnknownOutcomeError reports a write whose connection failed after the
// command was sent: the server may or may not have executed it, so it was
// not sent again.
type UnknownOutcomeError struct {
	Command string
	Node    Node
	Err     error
}

// Error implements error.
func (e *UnknownOutcomeError) Error() string {
	return fmt.Sprintf("shardis: %s on %s: outcome unknown (connection failed after sending): %s", e.Command, e.Node, errtext.Cause(e.Err))
}

// Unwrap returns the connection error.
func (e *UnknownOutcomeError) Unwrap() error { return e.Err }

// verdict is what the retry loop does with one failed call.
type verdict uint8

const (
	final      verdict = iota // the error stands
	retryNow                  // send again at once (MOVED, ASK)
	retryLater                // back off, refresh, route again, send again
)

// retryCluster runs the redirect and retry rules over the calls of one
// batch until each has a final result.
func (c *Client) retryCluster(ctx context.Context, calls []*call) (abandoned bool) {
	var (
		pending []*call
		start   time.Time
		backoff = 5 * time.Millisecond
	)
	for {
		pending = pending[:0]
		later, refresh := false, false
		for _, cl := range calls {
			if cl.done {
				continue
			}
			if cl.err == nil {
				// A replica's empty answer may be a key a resharding
				// moved: its slot's master says (cluster_confirm.go).
				if c.confirmEmpty(cl) {
					pending = append(pending, cl)
				}
				continue
			}
			if confirmUnreachable(cl) {
				continue
			}
			v, wantRefresh := c.judge(cl)
			switch v {
			case final:
				cl.done = true
				if wantRefresh {
					c.refresh(ctx, false) // coalesced; not waited for
				}
				continue
			case retryLater:
				later = true
			}
			refresh = refresh || wantRefresh
			pending = append(pending, cl)
		}
		if len(pending) == 0 {
			return false
		}
		if start.IsZero() {
			start = time.Now()
		}
		if refresh {
			c.refresh(ctx, later)
		}
		c.refreshOldFor(ctx, pending)
		if later {
			wait := min(backoff, 100*time.Millisecond)
			if backoff < 100*time.Millisecond {
				// Doubled only up to the cap: doubling on would overflow
				// after some 40 waits, to a zero or negative wait, and the
				// rest of MaxRetryWait would be a busy loop.
				backoff *= 2
			}
			if time.Since(start)+wait > c.clusterOpts().MaxRetryWait {
				c.giveUp(pending, "waited too long for the cluster")
				return false
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				for _, cl := range pending {
					cl.err, cl.done = errtext.Errorf("shardis: %w (while retrying: %v)", ctx.Err(), cl.err), true
				}
				return false
			}
		}
		if c.closed.Load() {
			// Close came while these waited: nothing more is sent.
			for _, cl := range pending {
				cl.err, cl.done = errtext.Errorf("%w (while retrying: %w)", ErrClosed, cl.err), true
			}
			return false
		}
		for _, cl := range pending {
			if cl.reroute {
				c.routeSlot(cl)
			}
			cl.err, cl.reply = nil, nil
			cl.attempts++
			c.nodes.get(cl.node).retries.Add(1)
		}
		if c.runHooked(ctx, pending) {
			return true
		}
	}
}

// judge decides what to do with a failed call and sets its next target.
//
// A call routed by a migration's old cluster (cl.old) whose failure asks
// for a topology read (a node that refuses connections or is marked
// down, CLUSTERDOWN, READONLY: a failover, say) asks for the old
// cluster's, and is routed again by that cluster's table at its key's
// slot (refreshOldFor, routeSlot). It used to ask for the client's own
// cluster's, which knows nothing of the old one, and to stay on its
// node: after a failover in the old cluster, every command on the dead
// master's slots ended with a *RetryError for the rest of the wait.
func (c *Client) judge(cl *call) (v verdict, refresh bool) {
	v, refresh = c.judgeCall(cl)
	if cl.old == nil || !refresh {
		return v, refresh
	}
	if v == final {
		c.refreshOldAfter(cl) // in the background, nothing waits for it
		return v, false
	}
	if cl.oldSlot < 0 {
		if slot, ok := callSlot(cl); ok {
			cl.oldSlot = slot
		}
	}
	cl.readOld = true
	return v, false
}

// callSlot returns the hash slot of cl's keys, false when it has none or
// keys of several slots.
func callSlot(cl *call) (int, bool) {
	if cl.info == nil {
		return 0, false
	}
	var buf [16]int
	pos, err := cl.info.KeyPositions(cl.args, buf[:0])
	if err != nil || len(pos) == 0 {
		return 0, false
	}
	slot := -1
	for _, p := range pos {
		if p < 0 || p >= len(cl.args) {
			return 0, false
		}
		k, ok := command.Arg(cl.args[p])
		if !ok {
			return 0, false
		}
		s := cluster.Slot(k)
		if slot >= 0 && s != slot {
			return 0, false
		}
		slot = s
	}
	return slot, true
}

// judgeCall is judge for any call: the refresh it asks for is the
// client's own cluster's.
func (c *Client) judgeCall(cl *call) (v verdict, refresh bool) {
	ns := c.nodes.get(cl.node)
	reset := writeRefused(cl)
	if reset {
		cl.resets++
	} else {
		cl.resets = 0
	}
	if ns.readOnly && cl.replica && !mayWrite(cl.info) && !c.closed.Load() && replicaRefusedLogin(cl.err) {
		// ACL users are per node: a replica that refuses the
		// credentials (its users not yet rolled out, a password rotated
		// there first) is unfit for reads, and the master, another
		// node, may take them. Nothing was sent. (A refusal by the
		// master stays final below: no retry fixes it.)
		cl.last, cl.reroute, cl.replica = cl.err.Error(), true, false
		return retryNow, true
	}
	if cl.old == nil {
		if cl.old = c.oldClusterOf(ns.node.Addr); cl.old != nil {
			cl.oldSlot = -1
		}
	}
	var re redis.Error
	if errors.As(cl.err, &re) {
		msg := string(re)
		switch cluster.ErrorCode(msg) {
		case "MOVED", "ASK":
			rd, ok := cluster.ParseRedirect(msg, ns.node.Addr)
			if !ok && cl.old != nil {
				// From a node of the old cluster, to a command routed
				// by it while a migration waits: the old cluster's
				// topology says where the slot went (refreshOldFor),
				// not the client's own cluster, whose table knows
				// nothing of the old one's slots: routed again by it,
				// the command ran on the new cluster, where a GET
				// read nil for a key the old cluster held.
				countRedirect(ns, msg)
				cl.last, cl.reroute, cl.readOld = msg, true, true
				if slot, ok := redirectSlot(msg); ok {
					cl.oldSlot = slot
				}
				return retryLater, false
			}
			if !ok {
				// A redirect to an endpoint we cannot dial ("?", port 0,
				// no port, a slot out of range): ask the topology where
				// the slot lives instead, and wait for it as for the
				// replies below, within MaxRetryWait. Not a hop followed:
				// counted against MaxRedirects, it ended commands with
				// "too many redirects" before a refresh held back by
				// MinRefreshInterval came in. It was received all the
				// same (Stats).
				countRedirect(ns, msg)
				cl.last, cl.reroute = msg, true
				return retryLater, true
			}
			cl.redirects++
			cl.last = msg
			if cl.redirects > c.clusterOpts().MaxRedirects {
				c.giveUp([]*call{cl}, "too many redirects")
				return final, false
			}
			if rd.Kind == cluster.Moved {
				ns.moved.Add(1)
				if old := cl.old; old != nil {
					// A command routed by the old cluster while a
					// migration waits: the MOVED corrects the old
					// table, which routes the slot's later commands.
					// Written into the client's own table, it pointed
					// a slot of the new cluster at an old node until a
					// refresh, and left the old table stale: every
					// later command on the slot paid the same hop.
					c.applyMovedHere(old, rd.Slot, rd.Addr)
					cl.oldSlot = rd.Slot
					cl.node, cl.asking, cl.reroute = c.nodes.add(Node{Name: rd.Addr, Addr: rd.Addr}), false, false
					return retryNow, false
				}
				cl.node, cl.asking, cl.reroute = c.applyMoved(rd.Slot, rd.Addr), false, false
				return retryNow, true
			}
			ns.ask.Add(1)
			c.noteMigrating(cl, rd.Slot)
			cl.node, cl.asking, cl.reroute = c.nodes.add(Node{Name: rd.Addr, Addr: rd.Addr}), true, false
			return retryNow, false
		// The replies below mean "wait": the wait is bounded by
		// MaxRetryWait, and the redirect count starts again after it, so
		// that a multi-key command bouncing between a migrating slot's two
		// nodes (ASK, then TRYAGAIN until the migration ends) is not
		// mistaken for a redirect loop.
		case "TRYAGAIN":
			ns.tryAgain.Add(1)
			if slot, ok := callSlot(cl); ok {
				c.noteMigrating(cl, slot)
			}
			cl.last, cl.reroute, cl.redirects = msg, true, 0
			return retryLater, false
		case "CLUSTERDOWN", "LOADING", "MASTERDOWN":
			cl.last, cl.reroute, cl.redirects = msg, true, 0
			if ns.readOnly && cl.replica {
				// A replica still loading its data, cut off from its
				// master, or whose own view of the cluster is down (cut
				// off from the majority of the masters, while its
				// master is not): nothing ran, and the master may serve
				// the read. When the whole cluster is down, the master
				// says so too, and the read waits there.
				cl.replica = false
				if cluster.ErrorCode(msg) != "CLUSTERDOWN" {
					// Loading, or cut off: a state that lasts, in
					// which the replica answers PING as it did the
					// read. Marked down now, later reads stay off it
					// instead of each paying a round trip there until
					// the health checks have failed FailureLimit times
					// in a row; the first PING it answers brings it
					// back.
					c.markDown(cl.node, re)
				}
				return retryNow, true
			}
			return retryLater, true
		case "READONLY":
			// The node we took for the master was demoted: nothing ran.
			cl.last, cl.reroute, cl.redirects = msg, true, 0
			return retryLater, true
		case "UNBLOCKED":
			if unblockedByDemotion(cl.info, msg) {
				// A blocked command whose master was demoted while it
				// waited: nothing ran, and the new master serves it.
				// Returned, the server's UNBLOCKED ended every BLPOP
				// consumer of the slot at each failover.
				cl.last, cl.reroute, cl.redirects = msg, true, 0
				return retryLater, true
			}
		}
		return final, false
	}
	var ne *NodeError
	if !errors.As(cl.err, &ne) {
		return final, false
	}
	if errors.Is(cl.err, context.Canceled) || errors.Is(cl.err, context.DeadlineExceeded) {
		return final, false
	}
	if isAuthFailure(ne.Err) {
		// Wrong credentials: no retry can fix them, and the caller
		// should learn so at once, not after MaxRetryWait.
		return final, false
	}
	if c.closed.Load() && (notSent(ne.Err) || errors.Is(ne.Err, pool.ErrClosed)) {
		// The client was closed: nothing was sent (the pools are
		// closed), and no retry would send it.
		if !errors.Is(cl.err, ErrClosed) { // the borrow says so already (conn)
			cl.err = errtext.Errorf("%w (%w)", ErrClosed, cl.err)
		}
		return final, false
	}
	if errors.Is(ne.Err, redis.ErrPoolExhausted) {
		// MaxActive connections borrowed and no Wait: nothing was sent
		// (no unknown outcome), the node is not at fault (no refresh),
		// and the pool says such a Get fails at once.
		return final, false
	}
	cl.last, cl.reroute = ne.Error(), true
	if ns.readOnly && cl.replica && !mayWrite(cl.info) {
		// A replica that is dead (refused, reset), hung (timed out) or
		// marked down: the read is safe to send again, and the slot's
		// master, another node, can serve it now.
		cl.replica = false
		return retryNow, true
	}
	if reset && cl.resets >= 2 {
		// The node reset the command's write again, with no refusal
		// (a query over its client-query-buffer-limit): it refuses the
		// command, it is not going away (a node that dies mid-write
		// does it once; the next dial fails). It did not run. Sent
		// again, the whole value each time, until MaxRetryWait ran out,
		// it ended "waited too long for the cluster" (as on a Sentinel
		// shard: judgeSentinel).
		return final, false
	}
	if notSent(ne.Err) {
		if cl.once {
			// Nothing was sent and the node is not there (refused,
			// marked down): the caller does without its answer.
			return final, true
		}
		return retryLater, true
	}
	if timedOut(ne.Err) {
		// The node was sent the command and did not answer within the
		// whole read timeout: a hung node. Sending again would wait as
		// long once more, so the timeout is final (the topology is
		// refreshed in case a replica takes over: the old cluster's too,
		// for a call routed by it, refreshOldAfter); a write's outcome
		// is unknown.
		if mayWrite(cl.info) {
			cl.err = &UnknownOutcomeError{Command: strings.ToUpper(cl.name), Node: ne.Node, Err: ne}
		}
		return final, true
	}
	if !mayWrite(cl.info) {
		return retryLater, true
	}
	cl.err = &UnknownOutcomeError{Command: strings.ToUpper(cl.name), Node: ne.Node, Err: ne}
	return final, true
}

// replicaRefusedLogin reports whether err is a node's refusal of the
// client's credentials at the dial (a *pool.AuthError, also while the
// node is marked down for it), as opposed to an error reply to the
// command itself.
func replicaRefusedLogin(err error) bool {
	var ne *NodeError
	return errors.As(err, &ne) && isAuthFailure(ne.Err)
}

// countRedirect counts a MOVED or ASK reply of ns's that names no
// usable address in ns's statistics (Stats' Moved and Ask), as those that
// do are.
func countRedirect(ns *nodeState, msg string) {
	switch cluster.ErrorCode(msg) {
	case "MOVED":
		ns.moved.Add(1)
	case "ASK":
		ns.ask.Add(1)
	}
}

// timedOut reports whether err is a read or write timeout on a node's
// connection.
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// notSent reports whether a node error happened before the command could
// reach the server, or reached it without running: a refused or failed
// dial, an address no dial can use, a node marked down, a command
// written after one the server refused with a protocol error (it closed
// the connection before reading further), or one whose connection failed
// before the command was completely written (errNotWritten).
func notSent(err error) bool {
	var de *pool.DialError
	return errors.As(err, &de) || errors.Is(err, ErrNodeDown) || errors.Is(err, pool.ErrAuth) ||
		errors.Is(err, pool.ErrBadAddr) || errors.Is(err, errAfterProtocolError) || errors.Is(err, errNotWritten)
}

// routeSlot points cl at its slot's master (or replica) in the current
// table. A call routed by a migration's old cluster (cl.old) is routed
// by that cluster's table, at the slot a redirect named or its keys'
// slot (judge); without one it stays on its node.
func (c *Client) routeSlot(cl *call) {
	if cl.old != nil {
		if st := cl.old.state.Load(); st != nil && cl.oldSlot >= 0 && cl.oldSlot < cluster.SlotCount {
			cl.node, cl.asking, cl.replica = int(st.master[cl.oldSlot]), false, false
		}
		return
	}
	r := c.cl()
	if r == nil || cl.group < 0 || cl.group >= cluster.SlotCount {
		return // routed by a ring: its node stays
	}
	st := r.state.Load()
	cl.node, cl.asking = int(st.master[cl.group]), false
	if cl.replica && !r.migrating.has(cl.group) {
		cl.node = c.pickReader(st, cl.group, cl.node)
	}
}

func (c *Client) giveUp(calls []*call, why string) {
	for _, cl := range calls {
		cl.err = &RetryError{Command: strings.ToUpper(cl.name), Attempts: cl.attempts + 1, Last: lastOf(cl, why), Err: cl.err}
		cl.done = true
	}
}

func lastOf(cl *call, why string) string {
	if cl.last == "" {
		return why
	}
	return cl.last + " (" + why + ")"
}

// mayWrite reports whether a command cut off after it was sent may have
// changed data, so that sending it again could apply it twice: every
// command but the read-only ones and those that touch no data at all
// (writesNothing). Not only the commands flagged as writes: EVAL, FCALL
// and PUBLISH carry no write flag, yet a script may INCR and a message
// published twice arrives twice. An unknown command may do anything.
func mayWrite(info *command.Info) bool {
	return info == nil || !info.IsReadOnly() && !writesNothing(info)
}

// writesNothing reports whether a command of Redis's own table that is not
// flagged read-only still changes no data: PING, ECHO, TIME, MULTI, WATCH,
// CLIENT ID, ... It goes by the flags, conservatively: not a write, nor one
// that may be propagated to replicas (PUBLISH), nor a pub/sub,
// administrative (CLIENT KILL, CONFIG SET, SHUTDOWN, ...) or module
// command. Some writes carry none of those flags and are named: EXEC,
// which runs what was queued, EVAL, EVALSHA and FCALL, whose script may
// write, WAIT and WAITAOF, whose answer is about the connection's own
// writes (sent again on another connection they would vouch at once for
// writes it never made), and the SCRIPT and FUNCTION subcommands (SCRIPT FLUSH empties
// the script cache, a KILL ends a script). A container (CLIENT, CONFIG,
// ...) counts as its most dangerous subcommand, a write: its
// subcommand's entry (Info.Resolve) says more. An entry built from a
// server's COMMAND INFO (command.FromCommandInfo) is not trusted: an
// older server lacks the may_replicate and module flags.
func writesNothing(info *command.Info) bool {
	const doing = command.Write | command.MayReplicate | command.PubSub | command.Admin | command.Module
	if info.Flags&doing != 0 || info.IsContainer() {
		return false
	}
	switch name := info.Name; {
	case name == "exec", name == "eval", name == "evalsha", name == "fcall",
		name == "wait", name == "waitaof",
		strings.HasPrefix(name, "script|"), strings.HasPrefix(name, "function|"):
		return false
	}
	return command.Lookup(info.Name) == info
}

// redirectSlot returns the slot of a MOVED or ASK reply, also of one
// whose address cluster.ParseRedirect cannot use ("?").
func redirectSlot(msg string) (int, bool) {
	f := strings.Fields(strings.TrimPrefix(msg, "-"))
	if len(f) < 2 {
		return 0, false
	}
	slot, err := strconv.Atoi(f[1])
	if err != nil || slot < 0 || slot >= cluster.SlotCount {
		return 0, false
	}
	return slot, true
}
