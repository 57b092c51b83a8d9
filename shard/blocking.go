package shard

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard/command"
)

// Whether a command blocks is decided by its arguments, not by the
// command table's "blocking" flag alone: XREAD and XREADGROUP carry the
// flag, but only their BLOCK form waits on the server; without it they
// answer at once and keep the read timeout like any other command. A
// command that blocks is never put on an automatic pipeline (it would
// hold up the replies queued behind it) and its reply is waited for for
// as long as it asked the server to block, plus the read timeout.

// waitInfo is WAIT's entry: it blocks like BLPOP without the table's flag.
var waitInfo = command.Lookup("wait")

// waitAOF is the name of WAITAOF (Redis 7.2), which blocks like WAIT
// (its timeout, in milliseconds, is its third argument) without the
// table's flag either. The table, of an older Redis, does not know it: a
// call has the entry learned from the servers, or none (a lent
// connection's commands are looked up in the table only).
const waitAOF = "waitaof"

// isBlocking reports whether cl makes the server hold its reply back
// until something happens or its own timeout passes: BLPOP, BRPOP,
// BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP, WAIT and
// WAITAOF always;
// XREAD and XREADGROUP only with BLOCK.
func isBlocking(cl *call) bool {
	_, ok := blockFor(cl)
	return ok
}

// blockFor reports whether cl blocks (see isBlocking) and for how long it
// asked the server to block at most: 0 means without limit (a timeout
// argument of 0, or one that does not parse).
func blockFor(cl *call) (time.Duration, bool) {
	info := cl.info
	if info == nil {
		if len(cl.name) == len(waitAOF) && strings.EqualFold(cl.name, waitAOF) {
			return argDuration(cl.args, 2, time.Millisecond), true
		}
		return 0, false
	}
	if info.Flags&command.Blocking == 0 && info != waitInfo && info.Name != waitAOF {
		return 0, false // the common case
	}
	if info == waitInfo {
		return argDuration(cl.args, 1, time.Millisecond), true
	}
	switch info.Name {
	case waitAOF:
		return argDuration(cl.args, 2, time.Millisecond), true
	case "xread", "xreadgroup":
		return streamBlock(cl.args)
	case "blmpop", "bzmpop":
		return argDuration(cl.args, 0, time.Second), true
	}
	// BLPOP, BRPOP, BZPOPMIN, BZPOPMAX, BLMOVE, BRPOPLPUSH and any other
	// flagged command: the timeout in seconds comes last.
	return argDuration(cl.args, len(cl.args)-1, time.Second), true
}

// streamBlock finds the BLOCK option of XREAD or XREADGROUP among the
// options before STREAMS, skipping option values (a group or consumer
// may be named "BLOCK").
func streamBlock(args []any) (time.Duration, bool) {
	for i := 0; i < len(args); i++ {
		word := command.ArgText(args[i]) // as sent: a Stringer's BLOCK blocks
		switch {
		case strings.EqualFold(word, "STREAMS"):
			return 0, false
		case strings.EqualFold(word, "BLOCK"):
			return argDuration(args, i+1, time.Millisecond), true
		case strings.EqualFold(word, "COUNT"):
			i++
		case strings.EqualFold(word, "GROUP"):
			i += 2
		}
	}
	return 0, false
}

// argDuration reads args[i] as a number of units; 0 (without limit) when
// it is missing, zero, negative or not a number.
func argDuration(args []any, i int, unit time.Duration) time.Duration {
	if i < 0 || i >= len(args) {
		return 0
	}
	f, err := strconv.ParseFloat(command.ArgText(args[i]), 64)
	if err != nil || f <= 0 || math.IsNaN(f) || f*float64(unit) >= math.MaxInt64/2 {
		return 0
	}
	return time.Duration(f * float64(unit))
}

// bindLife gives an execution with a blocking command a context that
// Close ends too: the server may hold such a command's reply back without
// end (BLPOP with timeout 0), and the call, its connection to the server
// and the caller's goroutine would outlast the client. The release
// function, called once the execution is over, gives the calls that Close
// cut off an error wrapping ErrClosed. Any other execution keeps ctx, at
// no cost: its own timeouts bound it.
func (c *Client) bindLife(ctx context.Context, calls []*call) (_ context.Context, release func()) {
	if c.life == nil || !hasBlocking(calls) {
		return ctx, nil
	}
	bctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.life, func() { cancel(ErrClosed) })
	return bctx, func() {
		stop()
		if ctx.Err() == nil && errors.Is(context.Cause(bctx), ErrClosed) {
			markClosed(calls)
		}
		cancel(nil)
	}
}

// errClosedConn is the cause in the *NodeError of a call that Close cut
// off: Close closed the connection it waited on.
var errClosedConn = errors.New("shardis: its connection closed by Close")

// markClosed gives the calls that Close cut off (bindLife) the error that
// says so. Their error was the context.Canceled of the context that Close
// ended, which the caller's own context did not cause.
func markClosed(calls []*call) {
	for _, cl := range calls {
		if cl.err == nil || !errors.Is(cl.err, context.Canceled) {
			continue
		}
		cl.err = closedErr(cl.err, mayWrite(cl.info))
	}
}

// closedErr is the error of a call that Close cut off, whose error was
// err: the context.Canceled of the context that Close ended. write says
// that the call may write: it may have run, and the error is a
// *cutWriteError, which finalOutcome classifies as OutcomeUnknown.
func closedErr(err error, write bool) error {
	var ne *NodeError
	if errors.As(err, &ne) {
		err = errtext.Errorf("%w: cut off while waiting for the reply (it may have run): %w",
			ErrClosed, &NodeError{Node: ne.Node, Err: errClosedConn})
	} else {
		err = errtext.Errorf("%w: cut off while waiting for the reply (it may have run)", ErrClosed)
	}
	if write {
		return &cutWriteError{err: err}
	}
	return err
}

// cutWriteError is the error of a write that Close cut off while it
// waited for its reply (a BLPOP, which pops, or BLMOVE): it wraps ErrClosed,
// and, as the command may have run, finalOutcome classifies it as
// OutcomeUnknown, as the node's Command or Pipeline event does, where a
// read cut off so is OutcomeFailed. Its text is err's.
type cutWriteError struct{ err error }

func (e *cutWriteError) Error() string { return e.err.Error() }
func (e *cutWriteError) Unwrap() error { return e.err }

// cutByClose reports whether Close ended ctx: the context of an execution
// with a blocking command (bindLife), ended by Close before the caller's
// own context ended.
func cutByClose(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrClosed)
}
