package shard

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
)

// The causes ErrorCause returns besides a server's error code. They are
// few and never hold data from the error's text: fit for a metric's label.
const (
	// CauseTxAborted: a transaction that a watched key aborted
	// (ErrTxAborted).
	CauseTxAborted = "tx_aborted"
	// CauseOther: a server's error reply whose code Redis does not
	// define (a script's error_reply, a module's code). Its text may
	// hold anything, a key or a secret.
	CauseOther = "other"
	// CauseClosed: the client was closed (ErrClosed).
	CauseClosed = "closed"
	// CauseNodeDown: the node was marked down (ErrNodeDown).
	CauseNodeDown = "node_down"
	// CauseAuth: the server refused the credentials sent while dialing
	// (pool.ErrAuth).
	CauseAuth = "auth"
	// CauseDial: a new connection could not be made ready for another
	// reason than a deadline (*pool.DialError): refused, TLS, a setup
	// command's error reply, the server's maxclients.
	CauseDial = "dial"
	// CauseTimeout: a deadline ended a dial or a read (the context's,
	// the pool's dial or read timeout).
	CauseTimeout = "timeout"
	// CauseCanceled: the caller's context was cancelled.
	CauseCanceled = "canceled"
	// CauseIO: an opened connection failed (*NodeError): reset, closed
	// by the server, a reply that is not valid RESP.
	CauseIO = "io"
)

// serverCodes are the error codes Redis and Valkey reply with: the only
// ones ErrorCause takes from an error reply.
var serverCodes = map[string]bool{
	"ERR": true, "WRONGTYPE": true, "OOM": true, "NOSCRIPT": true, "BUSY": true, "BUSYKEY": true,
	"BUSYGROUP": true, "NOGROUP": true, "NOAUTH": true, "NOPERM": true, "WRONGPASS": true,
	"EXECABORT": true, "READONLY": true, "MASTERDOWN": true, "LOADING": true, "CLUSTERDOWN": true,
	"CROSSSLOT": true, "MOVED": true, "ASK": true, "TRYAGAIN": true, "NOREPLICAS": true,
	"MISCONF": true, "UNBLOCKED": true, "NOTBUSY": true, "NOGOODSLAVE": true, "NOMASTERLINK": true,
	"NOPROTO": true, "UNKILLABLE": true,
}

// ErrorCause classifies an error the client returned (or passed to a
// hook) into a bounded cause, fit for a metric's label: its text never
// holds a key, a value, an address or a secret. The first that applies
// wins:
//
//   - "" for a nil err;
//   - CauseTxAborted ("tx_aborted") for ErrTxAborted;
//   - CauseClosed ("closed") for ErrClosed;
//   - CauseNodeDown ("node_down") for ErrNodeDown;
//   - CauseAuth ("auth") for refused credentials (pool.ErrAuth), whatever
//     the server replied;
//   - for a connection that could not be made ready (*pool.DialError):
//     CauseTimeout ("timeout") for a deadline, CauseCanceled
//     ("canceled") for a cancelled context, else CauseDial ("dial"),
//     even when a setup command's error reply is the reason;
//   - for a server's error reply (redis.Error): its code when Redis or
//     Valkey defines it (ERR, WRONGTYPE, OOM, NOSCRIPT, BUSY, BUSYKEY,
//     BUSYGROUP, NOGROUP, NOAUTH, NOPERM, WRONGPASS, EXECABORT, READONLY,
//     MASTERDOWN, LOADING, CLUSTERDOWN, CROSSSLOT, MOVED, ASK, TRYAGAIN,
//     NOREPLICAS, MISCONF, UNBLOCKED, NOTBUSY, NOGOODSLAVE, NOMASTERLINK,
//     NOPROTO, UNKILLABLE), else CauseOther ("other");
//   - for a failure of an opened connection (*NodeError): CauseTimeout
//     for a read or write that timed out, else CauseIO ("io");
//   - CauseTimeout for a deadline (context.DeadlineExceeded, a network
//     timeout), CauseCanceled for context.Canceled;
//   - "" for anything else (a command refused before it was sent, a bad
//     argument): the caller picks its own name for it, as the Prometheus
//     and OpenTelemetry extras use the attempt's Outcome.
//
// A *RetryError is classified by the failure it wraps.
func ErrorCause(err error) string {
	var de *pool.DialError
	var re redis.Error
	var ne *NodeError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrTxAborted):
		return CauseTxAborted
	case errors.Is(err, ErrClosed):
		return CauseClosed
	case errors.Is(err, ErrNodeDown):
		return CauseNodeDown
	case errors.Is(err, pool.ErrAuth):
		return CauseAuth
	case errors.As(err, &de):
		if c := deadlineCause(err); c != "" {
			return c
		}
		return CauseDial
	case errors.As(err, &re):
		if code, _, _ := strings.Cut(string(re), " "); serverCodes[code] {
			return code
		}
		return CauseOther
	case errors.As(err, &ne):
		if isTimeoutErr(err) {
			return CauseTimeout
		}
		return CauseIO
	}
	return deadlineCause(err)
}

// deadlineCause is CauseTimeout for a deadline, CauseCanceled for a
// cancelled context, "" otherwise.
func deadlineCause(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), isTimeoutErr(err):
		return CauseTimeout
	case errors.Is(err, context.Canceled):
		return CauseCanceled
	}
	return ""
}

// isTimeoutErr reports whether err is a deadline of the network or of
// the operating system.
func isTimeoutErr(err error) bool {
	var te net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &te) && te.Timeout()
}
