package shard

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
)

// nodeDownError is what a command gets from a node marked down: it
// matches ErrNodeDown and, for as long as the node stays down, the
// failure that keeps it down (the last one health checks or commands
// saw), so that wrong credentials stay matchable with
// errors.Is(err, pool.ErrAuth) and a refused dial with errors.As(err,
// **pool.DialError), instead of turning into a bare "node is down".
type nodeDownError struct {
	cause error // never nil
}

// Error returns "shardis: node is down (last failure: <cause>)".
func (e *nodeDownError) Error() string {
	return ErrNodeDown.Error() + " (last failure: " + errtext.Nested(e.cause) + ")"
}

// Unwrap returns ErrNodeDown and the cause.
func (e *nodeDownError) Unwrap() []error { return []error{ErrNodeDown, e.cause} }

// noteCause records err as the node's last failure. A timeout does not
// replace an authentication failure or a certificate that failed
// verification: a health check that was slow to get its NOAUTH, or to
// finish its TLS handshake, says nothing new, and the caller should keep
// learning that the credentials or the certificate are wrong (a refused
// dial, a reset or a success does replace it).
func (ns *nodeState) noteCause(err error) {
	if old := ns.cause.Load(); old != nil && isConfigFailure(old.cause) && !isConfigFailure(err) && isTimeout(err) {
		return
	}
	ns.cause.Store(&nodeDownError{cause: err})
}

// isTimeout reports whether err is a timeout: a context deadline or a
// network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// downErr returns the error a command gets while the node is down.
func (ns *nodeState) downErr() error {
	if e := ns.cause.Load(); e != nil {
		return e
	}
	return ErrNodeDown
}

// downCause returns the failure that keeps the node down, for a NodeDown
// event: the last one noted, or ErrNodeDown when none was.
func (ns *nodeState) downCause() error {
	if e := ns.cause.Load(); e != nil {
		return e.cause
	}
	return ErrNodeDown
}

// authReply turns a server's refusal of an unauthenticated or wrongly
// authenticated connection (NOAUTH, WRONGPASS) into a *pool.AuthError, as
// a refused AUTH at dial time is: a node that answers so is not down, its
// credentials are wrong, and the caller can match that with
// errors.Is(err, pool.ErrAuth) (errors.As still finds the redis.Error).
// Other errors are returned as they are.
func (c *Client) authReply(addr string, err error) error {
	var re redis.Error
	if !errors.As(err, &re) || !isAuthReply(re) {
		return err
	}
	user := c.cfg.Pool.Username
	if user == "" {
		user = "default"
	}
	return &pool.AuthError{Addr: addr, Username: user, Err: re}
}

// isAuthReply reports whether a server error reply refuses the
// connection's credentials.
func isAuthReply(re redis.Error) bool {
	if len(re) == 0 || (re[0] != 'N' && re[0] != 'W') { // the common case: one test
		return false
	}
	s := string(re)
	return strings.HasPrefix(s, "NOAUTH ") || strings.HasPrefix(s, "WRONGPASS ")
}

// replyError is the error a command gets for the server's error reply re
// from node i: re itself, or a *pool.AuthError (see authReply), which
// counts as a failure of the node (and refused reports it: the caller must
// not then count the round trip as a success). The WRONGPASS that answers
// an AUTH or HELLO of the caller's own refuses that command's
// credentials, not the connection's: see commandReplyError, which a
// caller that knows the command uses instead.
func (c *Client) replyError(i int, re redis.Error) (err error, refused bool) {
	if !isAuthReply(re) {
		return re, false
	}
	err = c.authReply(c.nodes.get(i).node.Addr, re)
	c.noteFailure(context.Background(), i, err)
	return err, true
}

// isConfigFailure reports whether err is a failure that the client's
// configuration causes and waiting does not end: an authentication
// failure, or a server certificate that failed verification (an unknown
// authority, a name it does not carry).
func isConfigFailure(err error) bool {
	var cve *tls.CertificateVerificationError
	return isAuthFailure(err) || errors.As(err, &cve)
}

// isAuthFailure reports whether err is an authentication failure, which
// no retry can fix.
func isAuthFailure(err error) bool { return errors.Is(err, pool.ErrAuth) }

// downNodeErr returns, for a node the health checks keep down, a
// *NodeError with the cause it is down for (matching ErrNodeDown); nil
// for a node that is not down or not known.
func (c *Client) downNodeErr(addr string) *NodeError {
	i, ok := c.nodes.lookup(addr)
	if !ok {
		return nil
	}
	if ns := c.nodes.get(i); ns.down.Load() {
		return &NodeError{Node: ns.node, Err: ns.downErr()}
	}
	return nil
}

// ringDownErr is the error of a key that no ring shard can serve because
// every shard is ejected: ErrNoNodes, and for each shard kept down by the
// health checks, why (downNodeErr).
func (c *Client) ringDownErr(rr *RingRouter) error {
	var errs []error
	for _, n := range rr.nodes {
		if ne := c.downNodeErr(n.Addr); ne != nil {
			errs = append(errs, ne)
		}
	}
	if len(errs) == 0 {
		return ErrNoNodes
	}
	return errtext.Errorf("%w: every shard is down: %w", ErrNoNodes, errors.Join(errs...))
}
