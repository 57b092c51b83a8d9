package shard

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard/command"
)

// masterOf returns the Sentinel shard whose master node is node; nil for
// a plain shard's node and for a replica. A replica is not looked up: one
// re-pointed to another master set is on both shards' lists for a while,
// and the shard that listed it last need not be the one a call was for
// (see shardOfCall).
func (s *sentinels) masterOf(node int) *sentShard {
	if node >= 0 && node < len(s.byMaster) {
		return s.byMaster[node]
	}
	return nil
}

// shardOfCall is the Sentinel shard of a call, which knows where it was routed: a
// read on a replica belongs to the shard its key was placed on (cl.group:
// placeSentinelRead only moves a call routed to a Sentinel shard's node,
// whose index is its group), and any other call to the Sentinel shard
// whose master node it went to; none is looked up by the replica
// addresses the queries listed. A replica re-pointed to another master set
// is on both shards' lists until a query or ROLE check drops it from the
// old one (a read of the old shard's key that failed there went to the
// other shard's master), and a plain shard of a mixed ring at a replica's
// address is no replica read (its writes, refused with READONLY, went to
// the Sentinel shard's master).
func (s *sentinels) shardOfCall(cl *call) (*sentShard, bool) {
	if cl.replica && cl.group >= 0 && cl.group < len(s.byMaster) && s.byMaster[cl.group] != nil {
		return s.byMaster[cl.group], true
	}
	if !cl.replica && cl.node >= 0 && cl.node < len(s.byMaster) && s.byMaster[cl.node] != nil {
		return s.byMaster[cl.node], false
	}
	return nil, false
}

// placeSentinelRead points a read-only call routed to configured node at
// one of the shard's replicas, by the ReadFrom policy.
func (c *Client) placeSentinelRead(cl *call, node int) {
	st := c.sent
	if node < 0 || node >= len(st.byMaster) || st.byMaster[node] == nil {
		return
	}
	sh := st.byMaster[node]
	p := sh.replicas.Load()
	if p == nil || len(*p) == 0 {
		return
	}
	readers := *p
	seen := sh.repSeen.Load()
	// fit reports whether replica r may serve the read: not down, and
	// not failed since a query checked it (it may have restarted empty;
	// then it is dropped until a query checks it again).
	fit := func(r int32) bool {
		if c.failedSinceCheck(seen, r) {
			sh.dropReplica(int(r))
			return false
		}
		return !c.nodes.get(int(r)).down.Load()
	}
	best := -1
	// The scan starts at a random replica: with no round trip measured
	// (health checks off, or not run yet) the latency policy spreads
	// reads as the random one does instead of sending them all to the
	// first replica listed.
	start := rand.IntN(len(readers))
	if st.opts.ReadFrom == ReadReplicaLatency {
		var bestRTT int64
		for k := range readers {
			r := readers[(start+k)%len(readers)]
			ns := c.nodes.get(int(r))
			if !fit(r) {
				continue
			}
			rtt := ns.rtt.Load()
			if best < 0 || (rtt > 0 && (bestRTT == 0 || rtt < bestRTT)) {
				best, bestRTT = int(r), rtt
			}
		}
	} else {
		for k := range readers {
			r := readers[(start+k)%len(readers)]
			if fit(r) {
				best = int(r)
				break
			}
		}
	}
	if best >= 0 {
		cl.node, cl.replica = best, true
	}
}

// retrySentinel applies the failover rules to the failed calls of a batch
// on Sentinel shards: every failure that may mean a new master (a
// connection error, READONLY, MASTERDOWN, LOADING, NOREPLICAS) asks for a
// query of the Sentinels; a read that failed on a replica goes to the
// master at once; a write whose connection failed after sending fails
// with *UnknownOutcomeError and is never sent again; a call that did not
// run waits for the new master and is sent again, within FailoverWait. A
// read that a shard's master answered after a call of the batch that is
// sent again there (a demoted master answers reads and refuses writes with
// READONLY) is sent again after it, so that it sees that call's effect as
// the batch's order promises; it keeps its first reply when the call
// before it is not sent again after all.
func (c *Client) retrySentinel(ctx context.Context, calls []*call) (abandoned bool) {
	var (
		pending []*call
		rerun   []*call // reads of pending sent again for order only
		held    []int   // master nodes with a call of the last run in pending
		start   time.Time
		waited  bool // a run came after a wait for a new master
		backoff = 5 * time.Millisecond
		budget  = c.sent.opts.FailoverWait
		ran     = calls // the calls of the last run, in the batch's order
	)
	for {
		pending, rerun, held = pending[:0], rerun[:0], held[:0]
		var later bool
		var round <-chan struct{}
		for _, cl := range ran {
			if cl.done {
				continue
			}
			if cl.err == nil {
				if len(held) > 0 && !mayWrite(cl.info) && !cl.replica && slices.Contains(held, cl.node) {
					pending = append(pending, cl)
					rerun = append(rerun, cl)
				}
				continue
			}
			sh, replica := c.sent.shardOfCall(cl)
			if sh == nil {
				// A plain shard of a mixed ring: its rules are the
				// plain ring's (execute marks no call when c.sent is set).
				markUnknownOutcome(cl)
				cl.done = true
				continue
			}
			node := cl.node
			switch v := c.judgeSentinel(ctx, sh, replica, cl); {
			case v == retryNow:
				pending = append(pending, cl)
			case v == retryLater && budget > 0:
				later = true
				round = sh.request()
				pending = append(pending, cl)
				if !replica && !slices.Contains(held, node) {
					held = append(held, node)
				}
			default:
				if waited && ctx.Err() != nil && !errors.Is(cl.err, ctx.Err()) {
					// The context ended while the call was sent again
					// after a wait (a down node fails it at once, before
					// the context is looked at): said as for an end
					// during the wait itself.
					cl.err = errtext.Errorf("shardis: %w while waiting for a new master: %w", ctx.Err(), cl.err)
				}
				cl.done = true
			}
		}
		if len(pending) == len(rerun) {
			return false
		}
		if start.IsZero() {
			start = time.Now()
		}
		if later {
			left := budget - time.Since(start)
			if left <= 0 {
				c.giveUpSentinel(withoutReruns(pending, rerun))
				return false
			}
			t := time.NewTimer(min(backoff, left))
			backoff = min(backoff*2, 100*time.Millisecond) // doubling on would overflow
			select {
			case <-round:
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				for _, cl := range withoutReruns(pending, rerun) {
					cl.err, cl.done = errtext.Errorf("shardis: %w while waiting for a new master: %w", ctx.Err(), cl.err), true
				}
				return false
			}
			t.Stop()
			waited = true
		}
		for _, cl := range pending {
			cl.err, cl.reply = nil, nil
			cl.attempts++
			c.nodes.get(cl.node).retries.Add(1)
		}
		if c.runHooked(ctx, pending) {
			return true
		}
		ran = append(ran[:0:0], pending...)
	}
}

// giveUpSentinel fails calls that waited FailoverWait for a new master in
// vain, with a *RetryError. When the last query of a call's shard failed
// (every Sentinel down or refusing, or none naming a master that ROLE
// confirmed), the error wraps that query's error too (it matches
// sentinel.ErrNoSentinel) and says so: a dead master whose Sentinels are
// still at the failover is told from one whose Sentinels cannot be asked.
func (c *Client) giveUpSentinel(calls []*call) {
	const why = "no new master within the failover wait"
	for _, cl := range calls {
		if sh, _ := c.sent.shardOfCall(cl); sh != nil && sh.stale.Load() {
			if p := sh.queryErr.Load(); p != nil {
				cl.err = errtext.Errorf("%w (%w)", cl.err, *p)
				c.giveUp([]*call{cl}, why+"; the Sentinels named none: "+errtext.Cause(*p))
				continue
			}
		}
		c.giveUp([]*call{cl}, why)
	}
}

// withoutReruns returns the calls of pending that are not in rerun, which
// holds some of them in the same order.
func withoutReruns(pending, rerun []*call) []*call {
	if len(rerun) == 0 {
		return pending
	}
	out := make([]*call, 0, len(pending)-len(rerun))
	j := 0
	for _, cl := range pending {
		if j < len(rerun) && cl == rerun[j] {
			j++
			continue
		}
		out = append(out, cl)
	}
	return out
}

// judgeSentinel decides what to do with a failed call on Sentinel shard
// sh (on one of its replicas when replica is set).
func (c *Client) judgeSentinel(ctx context.Context, sh *sentShard, replica bool, cl *call) verdict {
	if c.closed.Load() {
		return final
	}
	if replica {
		// Only read-only commands go to replicas: sending one to the
		// master is safe. The replica serves no more reads until a query
		// finds it synced: one that died may come back empty.
		msg, unfit := replicaUnfit(ctx, cl.info, cl.err)
		if !unfit {
			return final
		}
		cl.last = msg
		sh.dropReplica(cl.node)
		cl.node, cl.replica = sh.node, false
		return retryNow
	}
	reset := writeRefused(cl)
	if reset {
		cl.resets++
	} else {
		cl.resets = 0
	}
	var re redis.Error
	if errors.As(cl.err, &re) {
		msg := string(re)
		code, _, _ := strings.Cut(msg, " ")
		switch code {
		case "READONLY", "MASTERDOWN", "LOADING", "NOREPLICAS":
			// Nothing ran. A master that answers READONLY was demoted;
			// one that answers NOREPLICAS (min-replicas-to-write) has
			// lost its replicas, maybe to a partition that the
			// Sentinels have failed over.
			cl.last = msg
			sh.request()
			return retryLater
		case "UNBLOCKED":
			if unblockedByDemotion(cl.info, msg) {
				// A blocked command whose master was demoted while it
				// waited (by a failover the Sentinels did not make:
				// theirs kills the old master's clients, and the
				// command's outcome is unknown): nothing ran, and the
				// new master serves it.
				cl.last = msg
				sh.request()
				return retryLater
			}
		}
		return final
	}
	var ne *NodeError
	if !errors.As(cl.err, &ne) {
		return final
	}
	if errors.Is(cl.err, context.Canceled) || errors.Is(cl.err, context.DeadlineExceeded) || ctx.Err() != nil {
		return final
	}
	if errors.Is(ne.Err, redis.ErrPoolExhausted) {
		// MaxActive connections borrowed and no Wait: nothing was sent,
		// the master is not at fault, and the pool says such a Get fails
		// at once.
		return final
	}
	cl.last = ne.Error()
	sh.request()
	if reset && cl.resets >= 2 {
		// The master reset the command's write again: it refuses the
		// command (a value over its proto-max-bulk-len), it is not going
		// away. It did not run.
		return final
	}
	if notSent(ne.Err) || !mayWrite(cl.info) {
		return retryLater
	}
	cl.err = &UnknownOutcomeError{Command: strings.ToUpper(cl.name), Node: ne.Node, Err: ne}
	return final
}

// writeRefused reports whether cl failed because its connection failed
// while its command was being written (errNotWritten), though the
// connection was made: what a live master does to a command it refuses
// part way (a value over proto-max-bulk-len: it replies with a protocol
// error and closes the connection while the rest of the value comes). A
// master that dies mid-write does it once; the next attempt's dial fails.
// A write reset twice in a row is the command's refusal, and is not sent
// again (judgeSentinel): before, it was sent again, the whole value each
// time, until FailoverWait ran out, and then blamed on a missing new
// master.
func writeRefused(cl *call) bool {
	var ne *NodeError
	return errors.As(cl.err, &ne) && errors.Is(ne.Err, errNotWritten)
}

// noteSentinelTxFailure asks for a query of the Sentinels when err, the
// failure of a transaction on node (Client.Tx, or MULTI ... EXEC on a
// Conn) or of a ForEachShard function there, may mean that node's
// Sentinel shard has a new master: READONLY, MASTERDOWN, LOADING or
// NOREPLICAS, or a failed connection that the caller's context did not
// cause. These are not sent through retrySentinel, whose judgeSentinel
// asks for that query for commands: without it, a client whose writes
// are all transactions went on writing to a demoted master until a
// +switch-master or a periodic query came, forever with the periodic
// queries off and the Sentinels unreachable.
func (c *Client) noteSentinelTxFailure(ctx context.Context, node int, err error) {
	if sh := c.sentinelTxFailover(ctx, node, err); sh != nil {
		sh.request()
	}
}

// sentinelTxFailover returns the Sentinel shard whose master node is,
// when err, a failure there, may mean that the shard has a new master
// (see noteSentinelTxFailure); nil otherwise.
func (c *Client) sentinelTxFailover(ctx context.Context, node int, err error) *sentShard {
	if c.sent == nil || err == nil || c.closed.Load() {
		return nil
	}
	sh := c.sent.masterOf(node)
	if sh == nil {
		return nil // a plain shard, or a replica (only reads go there)
	}
	var re redis.Error
	if errors.As(err, &re) {
		switch code, _, _ := strings.Cut(string(re), " "); code {
		case "READONLY", "MASTERDOWN", "LOADING", "NOREPLICAS":
			return sh
		}
		return nil
	}
	var ne *NodeError
	if !errors.As(err, &ne) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		ctx.Err() != nil || errors.Is(ne.Err, redis.ErrPoolExhausted) {
		return nil
	}
	return sh
}

// sentinelTxWait is the state of a transaction's retries on a Sentinel
// shard (retrySentinelTx), over its attempts.
type sentinelTxWait struct {
	start   time.Time
	backoff time.Duration
	resets  int // writes of MULTI ... EXEC that failed before their end, in a row
}

// retrySentinelTx decides, after attempt of a transaction on node failed
// with err and ended as how says, whether it runs again: with
// FailoverWait, when the node is a Sentinel shard's master, the failure
// may mean a new master (sentinelTxFailover: the query it asks for has
// been asked), and nothing of the attempt can have run (txNotRun,
// txNotWritten; never after an EXEC whose connection failed once it was
// written, nor after fn wrote through Do). It then waits, as a command
// does (retrySentinel), for the query or a backoff of 5 ms ... 100 ms,
// and returns true. When FailoverWait is spent it returns the
// *RetryError to fail with. As for a command, a write of MULTI ... EXEC
// that the master resets twice in a row is its refusal (a value over
// proto-max-bulk-len), not a failover: it is not run again. what names
// the operation in the *RetryError (its Command).
func (c *Client) retrySentinelTx(ctx context.Context, node, attempt int, err error, how txEnd, w *sentinelTxWait, what string) (bool, error) {
	if how == txMayHaveRun || c.sent == nil || c.sent.opts.FailoverWait <= 0 || isAuthFailure(err) {
		return false, nil
	}
	sh := c.sentinelTxFailover(ctx, node, err)
	if sh == nil {
		return false, nil
	}
	if how == txNotWritten {
		if w.resets++; w.resets >= 2 {
			return false, nil
		}
	} else {
		w.resets = 0
	}
	if w.start.IsZero() {
		w.start, w.backoff = time.Now(), 5*time.Millisecond
	}
	left := c.sent.opts.FailoverWait - time.Since(w.start)
	if left <= 0 {
		const why = "no new master within the failover wait"
		cause, last := err, err.Error()+" ("+why+")"
		if p := sh.queryErr.Load(); p != nil && sh.stale.Load() {
			cause = errtext.Errorf("%w (%w)", err, *p)
			last = err.Error() + " (" + why + "; the Sentinels named none: " + errtext.Cause(*p) + ")"
		}
		return false, &RetryError{Command: what, Attempts: attempt + 1, Last: last, Err: cause}
	}
	round := sh.request()
	t := time.NewTimer(min(w.backoff, left))
	defer t.Stop()
	w.backoff = min(w.backoff*2, 100*time.Millisecond)
	select {
	case <-round:
	case <-t.C:
	case <-ctx.Done(): // the next attempt returns the context's error
	}
	return true, nil
}

// noteSentinelFailure is noteSentinelTxFailure for the node at addr (a
// ForEachShard function's node), by its address.
func (c *Client) noteSentinelFailure(ctx context.Context, addr string, err error) {
	if c.sent == nil {
		return
	}
	if i, ok := c.nodes.lookup(addr); ok {
		c.noteSentinelTxFailure(ctx, i, err)
	}
}

// replicaUnfit reports whether err, the failure of a read on a replica
// (of the command info describes), says that the replica could not serve
// it (and what it said): its connection or login failed, including a
// refusal of the client's credentials or connection that carries the
// server's error reply (the master may well accept them), it answered
// LOADING, MASTERDOWN or READONLY, or it ended a blocked read (XREAD
// BLOCK) with the UNBLOCKED of an instance whose replication changed (it
// was pointed at another master: unblockedByDemotion), which read nothing
// and closed the connection. A failure the caller's context caused, a
// full pool and the command's own error reply are not the replica's
// unfitness.
func replicaUnfit(ctx context.Context, info *command.Info, err error) (string, bool) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return "", false
	}
	var ne *NodeError
	if errors.As(err, &ne) {
		if errors.Is(ne.Err, redis.ErrPoolExhausted) {
			return "", false
		}
		return ne.Error(), true
	}
	if isAuthFailure(err) {
		return err.Error(), true
	}
	var re redis.Error
	if errors.As(err, &re) {
		switch code, _, _ := strings.Cut(string(re), " "); code {
		case "READONLY", "MASTERDOWN", "LOADING":
			return string(re), true
		case "UNBLOCKED":
			if unblockedByDemotion(info, string(re)) {
				return string(re), true
			}
		}
	}
	return "", false
}
