package shard

import (
	"context"
	"errors"
	"time"

	"github.com/shardis/shardis/pool"
)

// healthTimeoutError is the failure of a health check that got no answer
// within HealthOptions.Timeout. It is a timeout (net.Error), but not
// context.DeadlineExceeded: kept as the failure that keeps the node down
// (nodeDownError, NodeEvent.Err), the health check's own deadline
// matched context.DeadlineExceeded in the error of every command to the
// node, which says that the caller's context ended; a caller without
// any deadline was told its deadline passed, and the retry rules, which
// stop at once on the caller's ended context, gave up on it.
type healthTimeoutError struct {
	after time.Duration
}

// Error returns "shardis: no answer to the health check within <after>".
func (e *healthTimeoutError) Error() string {
	return "shardis: no answer to the health check within " + e.after.String()
}

// Timeout reports true: the error is a timeout (net.Error).
func (e *healthTimeoutError) Timeout() bool { return true }

// Temporary reports true, as a timeout's net.Error does.
func (e *healthTimeoutError) Temporary() bool { return true }

// healthTimeout returns err, the failure of a health check bounded by
// after, with the check's own deadline, when it is what ended it, as a
// *healthTimeoutError (inside the *pool.DialError of a dial it cut
// short). The check's context has no other deadline, and the socket's
// read deadline, set from it, may fire (and be reported as the context's)
// a moment before the context's own timer does.
func healthTimeout(err error, after time.Duration) error {
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	te := &healthTimeoutError{after: after}
	var de *pool.DialError
	if errors.As(err, &de) {
		return &pool.DialError{Addr: de.Addr, Err: te}
	}
	return te
}
