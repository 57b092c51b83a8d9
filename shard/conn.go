package shard

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard/command"
)

// Conn returns a redigo-compatible connection that routes each command to
// its own shard, so that existing redigo code works unchanged:
//
//	conn := client.Conn()
//	defer conn.Close()
//	v, err := redis.String(conn.Do("GET", "user:1"))
//
// Send queues a command, Flush sends everything queued as one pipeline
// (one round trip per shard, in parallel) and Receive returns the replies
// in order. A command that blocks on the server (BLPOP, XREAD BLOCK, ...)
// and those queued after it are sent by the Receive or Do that asks for
// their replies rather than by Flush, so that its context or timeout
// bounds the wait. Do sends what is queued plus its own command and, as in
// redigo, returns its own reply and the first server error among the
// replies it read; Do("") returns every pending reply as a []any. The
// returned value implements redis.Conn, redis.ConnWithContext and
// redis.ConnWithTimeout, so redis.DoContext, redis.DoWithTimeout,
// redis.ReceiveContext, redis.NewScript, redis.Args and the reply helpers
// all work. It holds no connection of its own outside a transaction, so it
// is cheap to create. Like a redigo connection, it is meant for one
// goroutine at a time. Once the Client is closed, Err returns ErrClosed
// and every command sent after that fails with it, unsent, a transaction
// in progress included (its connection is let go).
//
// Where it differs from a connection to one server:
//
//   - Transactions. MULTI ... EXEC (or DISCARD) runs on the node of the
//     transaction's first key, on a connection the Conn holds until EXEC or
//     DISCARD; WATCH pins the Conn to its keys' node likewise, until EXEC,
//     DISCARD or UNWATCH (a WATCH the server refuses, MOVED say, pins
//     nothing once its flush is done). Every key of the transaction must be on that node
//     (in cluster mode: in that hash slot), else the whole transaction is
//     refused with a *CrossShardError before any of it is sent: each
//     command up to EXEC then fails with that error, EXEC included, and
//     nothing runs. When the commands are sent in one go (Send ... Do("EXEC")),
//     that check happens before anything is written; when they are sent one
//     Do at a time, the commands already queued on the server are discarded.
//     A keyless command inside MULTI must follow a keyed one. MULTI's reply
//     is "OK" at once when no key is known yet (the server's is read when
//     the transaction's node is known, before anything else is sent there:
//     should the server refuse it, an ACL user without MULTI say, each
//     command up to EXEC fails with an error wrapping that refusal, EXEC
//     included, and nothing runs). Redirects are not followed inside a
//     transaction: use Client.Tx for retries in cluster mode. On a Sentinel
//     shard whose master is marked down or cannot be reached as the
//     transaction (or WATCH) takes its connection, nothing of it sent yet,
//     it waits for the new master within SentinelOptions.FailoverWait, as
//     a command does, then fails with a *RetryError; once commands were
//     sent it is never sent again. Should the transaction's connection
//     fail, each command up to EXEC fails with a *NodeError of its node,
//     EXEC included, and nothing queued after MULTI runs; once a
//     connection holding WATCH failed, the keys are no longer watched and
//     the next MULTI ... EXEC fails so, unsent, with an error that says
//     so and wraps that connection's *NodeError (UNWATCH ends that). A
//     command sent on that connection whose reply was lost may have run
//     (its error is an *UnknownOutcomeError: a write under WATCH, an
//     EXEC): the failures that follow it wrap that *UnknownOutcomeError
//     too, even when its caller ignored it.
//   - PING and ECHO check every shard (ForEachShard) and return the reply
//     they all gave; on a Conn pinned by a transaction they go to its node.
//   - SELECT succeeds only for the database the client is configured for
//     (Pool.DB), without a round trip (inside MULTI it is queued with the
//     transaction); any other fails with a *ConnStateError, and inside
//     MULTI refuses the whole transaction, before any of it is sent.
//   - QUIT answers "OK" and closes the Conn; RESET ends a transaction and
//     answers "RESET".
//   - Subscribing (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE), MONITOR, CLIENT
//     REPLY OFF|SKIP and HELLO 3 fail with a *ConnStateError whose hint
//     names the tool to use (Client.Subscribe, ForEachNode); other keyless
//     commands fail with ErrNoKey (use DoKey or ForEachShard).
//   - Receive with nothing sent fails at once instead of waiting.
//   - A command that fails to route (a *CrossShardError, ErrNoKey, ...) or
//     whose node failed (a *NodeError) fails alone: Receive returns its
//     error as it would a server's error reply; Do returns it as its error
//     when it is Do's own command (whatever the replies before it, though
//     it also wraps the *UnknownOutcomeError of the first of them that
//     may have run), and
//     as the first error otherwise; Do("") puts it in
//     the returned slice and also returns the first such error (where a
//     server's error replies only go in the slice). The Conn stays usable
//     and Err stays nil, where a redigo connection would be broken.
//   - Scripts are loaded per node: redis.Script's Do and SendHash work (Do
//     falls back to EVAL on NOSCRIPT, which loads the script on the key's
//     node), but Script.Load sends the keyless SCRIPT LOAD, which fails
//     with ErrNoKey: load scripts on every node with ForEachShard.
//
// The hooks (Config.Hooks) see a Do of one command as Client.Do's, an
// operation named after the command, and several commands flushed at
// once as a Pipeline.Exec. A transaction's commands, sent on its
// connection, are one operation per run sent at once: a command alone is
// its own (and a Hooks.Command event), several are one named "MULTI" when
// they hold MULTI or EXEC, "PIPELINE" otherwise (and a Hooks.Pipeline
// event); an EXEC that did not run because a watched key changed is
// OutcomeServerError with ErrTxAborted there, though its reply is nil.
func (c *Client) Conn() redis.Conn { return &routedConn{c: c} }

// routedConn adapts a Client to redis.Conn.
type routedConn struct {
	c       *Client
	mu      sync.Mutex
	queue   []connCmd // sent but not flushed
	replies []Result  // flushed but not received
	closed  bool
	tx      connTx // the transaction in progress, if any
}

// connCmd is one command sent on a routedConn.
type connCmd struct {
	name string
	args []any
}

var (
	_ redis.Conn            = (*routedConn)(nil)
	_ redis.ConnWithContext = (*routedConn)(nil)
	_ redis.ConnWithTimeout = (*routedConn)(nil)
)

// errReceiveNothing is Receive's error when no reply is pending.
var errReceiveNothing = errors.New("shardis: Receive with no command sent")

// Close ends the Conn: a transaction in progress is discarded and the
// connection it held goes back to the pool (or is closed).
func (rc *routedConn) Close() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.closeLocked()
	return nil
}

func (rc *routedConn) closeLocked() {
	rc.closed = true
	rc.queue, rc.replies = nil, nil
	rc.tx.end()
}

// Err returns a non-nil error once the Conn or its Client is closed.
func (rc *routedConn) Err() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return ErrConnClosed
	}
	if rc.c.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Do sends the queued commands and this one and returns this one's reply.
func (rc *routedConn) Do(name string, args ...any) (any, error) {
	return rc.DoContext(context.Background(), name, args...)
}

// DoWithTimeout is Do with every reply bounded by timeout as well as by
// the pool's read timeout (0: the read timeout alone).
func (rc *routedConn) DoWithTimeout(timeout time.Duration, name string, args ...any) (any, error) {
	ctx, cancel := timeoutContext(timeout)
	defer cancel()
	return rc.DoContext(ctx, name, args...)
}

// ReceiveWithTimeout is Receive bounded by timeout as well as by the
// pool's read timeout (0: the read timeout alone).
func (rc *routedConn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	ctx, cancel := timeoutContext(timeout)
	defer cancel()
	return rc.ReceiveContext(ctx)
}

func timeoutContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.Background(), func() {}
	}
	return context.WithTimeout(context.Background(), timeout)
}

// DoContext sends the queued commands plus this one and reads every
// pending reply, as redigo does: it returns this one's reply (a server
// error reply as its redis.Error value) and the first error among the
// replies read; when this one failed to route or its node failed, it
// returns that failure as the error instead (wrapping the
// *UnknownOutcomeError of an earlier reply read, if any: that command may
// have run). With an empty name it only flushes and returns every
// pending reply as a []any, server errors as redis.Error values inside it;
// the error is then the first one that is not a server's reply (a routing
// or node failure), if any.
func (rc *routedConn) DoContext(ctx context.Context, name string, args ...any) (any, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return nil, ErrConnClosed
	}
	if name == "" && len(rc.queue) == 0 && len(rc.replies) == 0 {
		return nil, nil
	}
	if name != "" {
		rc.queue = append(rc.queue, connCmd{name: name, args: slices.Clone(args)})
	}
	rc.flushLocked(ctx)
	replies := rc.replies
	rc.replies = nil
	if name == "" {
		out := make([]any, len(replies))
		var firstErr error
		for i, r := range replies {
			if r.Err == nil {
				out[i] = r.Reply
				continue
			}
			out[i] = r.Err
			if !isRedisError(r.Err) && firstErr == nil {
				firstErr = r.Err
			}
		}
		// The routing or node failures are in out too: the other
		// replies are not lost.
		return out, firstErr
	}
	last := replies[len(replies)-1]
	if last.Err != nil && !isRedisError(last.Err) {
		// This command did not run (it failed to route, or its node
		// failed): its own failure is the error, not an earlier reply's.
		// But the earlier replies are dropped: should one be a command
		// that may have run (its connection failed after it was sent,
		// as this one's may have), the error says so too.
		for _, r := range replies[:len(replies)-1] {
			var uo *UnknownOutcomeError
			if errors.As(r.Err, &uo) && !errors.Is(last.Err, uo) {
				return nil, afterLostWrite(last.Err, uo)
			}
		}
		return nil, last.Err
	}
	var firstErr error
	for _, r := range replies {
		if r.Err != nil {
			firstErr = r.Err
			break
		}
	}
	if last.Err != nil {
		return last.Err, firstErr // a server's error reply, as in redigo
	}
	return last.Reply, firstErr
}

// Send queues a command; nothing is checked or sent until Flush.
func (rc *routedConn) Send(name string, args ...any) error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return ErrConnClosed
	}
	// A copy: redigo encodes at Send, so callers may reuse their slice.
	rc.queue = append(rc.queue, connCmd{name: name, args: slices.Clone(args)})
	return nil
}

// Flush sends the queued commands, up to the first one that blocks on
// the server (BLPOP, XREAD BLOCK, WAIT, ... outside MULTI): that one and
// those after it are sent when a reply is asked for (Receive, Do), so that
// the context or timeout given there bounds the wait, as it does after a
// redigo connection's Flush. Flush itself reads the replies of what it
// sends, and has no context to bound a wait of the blocking command's own.
func (rc *routedConn) Flush() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return ErrConnClosed
	}
	n := rc.unblockedPrefix()
	rest := slices.Clone(rc.queue[n:])
	rc.queue = rc.queue[:n]
	rc.flushLocked(context.Background())
	rc.queue = rest
	return nil
}

// unblockedPrefix returns how many of the queued commands come before the
// first one that may block on the server. A blocking command between
// MULTI and EXEC does not, but only once the server's +OK to that MULTI
// was read: one it refused (an ACL user without MULTI, say) opened no
// transaction, and the command blocks as outside MULTI.
func (rc *routedConn) unblockedPrefix() int {
	multi := rc.tx.multi
	queued := multi && rc.tx.multiOK
	for i, cmd := range rc.queue {
		info := command.Lookup(cmd.name)
		switch lowerName(cmd.name) {
		case "multi":
			if !multi { // a nested one is refused, the first stays
				multi, queued = true, false // its reply is not read yet
			}
		case "exec", "discard":
			multi, queued = false, false
		}
		if !queued && isBlocking(&call{name: cmd.name, args: cmd.args, info: info}) {
			return i
		}
	}
	return len(rc.queue)
}

// Receive returns the next reply, flushing queued commands first when
// nothing has been flushed yet.
func (rc *routedConn) Receive() (any, error) {
	return rc.ReceiveContext(context.Background())
}

// ReceiveContext returns the next reply, flushing queued commands first
// when nothing has been flushed yet.
func (rc *routedConn) ReceiveContext(ctx context.Context) (any, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return nil, ErrConnClosed
	}
	if len(rc.replies) == 0 {
		rc.flushLocked(ctx)
	}
	if len(rc.replies) == 0 {
		return nil, errReceiveNothing
	}
	r := rc.replies[0]
	rc.replies[0] = Result{}
	rc.replies = rc.replies[1:]
	return r.Reply, r.Err
}
