package pool

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
)

var (
	// ErrClosed is returned by a Set, and by its pools, after Close.
	ErrClosed = errors.New("shardis: pool set closed")
	// ErrBadOptions is wrapped by every error that Options.Validate returns.
	ErrBadOptions = errors.New("shardis: bad pool options")
	// ErrBadAddr is wrapped by the error returned for an address that is not
	// a usable host:port.
	ErrBadAddr = errors.New("shardis: bad node address")
	// ErrAuth matches every *AuthError with errors.Is.
	ErrAuth = errors.New("shardis: authentication failed")
	// ErrProtocol is wrapped by the error a connection returns when the
	// server's reply stream is not valid RESP; the connection is closed.
	ErrProtocol = errors.New("shardis: protocol error")
	// ErrConnClosed is returned by a connection used after Close.
	ErrConnClosed = errors.New("shardis: connection closed")
	// ErrClosedBeforeReply is wrapped, next to the network's own error,
	// by the error of a plain-text connection that the server closed (or
	// reset) before its first reply: what a port that expects TLS does to
	// a plain-text client. Setting Options.TLSConfig is then the fix. It
	// also matches, with ErrProtocol, the error of a plain-text connection
	// whose server answered its first command with a TLS alert record, as
	// TLS servers other than redis-server's may do. The error is a
	// *DialError when a setup command met it, and otherwise that of the
	// caller's first command (which may have run, as for any connection
	// lost before the reply).
	ErrClosedBeforeReply = errors.New("shardis: the server closed the connection before its first reply, as a port that expects TLS does to a plain-text client (set Options.TLSConfig)")
)

// DialError reports that a new connection to Addr could not be made ready:
// the TCP connect, the TLS handshake or one of the setup commands sent while
// dialing (CLIENT SETNAME, SELECT, READONLY) failed, or the server had no
// room for another connection (maxclients), whichever command met it: a
// setup command, or, on a connection whose dial sent none, the caller's
// first command (which never ran) and every command sent with it. A
// refused AUTH is an *AuthError instead.
type DialError struct {
	// Addr is the node address that was dialed.
	Addr string
	// Err is the underlying failure (a net error, a TLS error, a context
	// error or the server's reply to a setup command).
	Err error
}

// Error returns "shardis: dial <addr>: <cause>".
func (e *DialError) Error() string {
	return "shardis: dial " + e.Addr + ": " + errtext.Cause(e.Err)
}

// Unwrap returns the underlying failure.
func (e *DialError) Unwrap() error { return e.Err }

// AuthError reports that the server at Addr refused the AUTH command sent
// while dialing. Its text is the server's reply with any copy of the password
// replaced by "***"; the password itself is never stored in the error.
type AuthError struct {
	// Addr is the node address that was dialed.
	Addr string
	// Username is the ACL user that was sent, or "default" when only a
	// password was configured.
	Username string
	// Err is the server's reply (a redis.Error), scrubbed of the password.
	Err error
}

// Error returns "shardis: auth as <user> on <addr> failed: <server reply>".
func (e *AuthError) Error() string {
	return "shardis: auth as " + e.Username + " on " + e.Addr + " failed: " + e.Err.Error()
}

// Unwrap returns the scrubbed server reply.
func (e *AuthError) Unwrap() error { return e.Err }

// Is reports whether target is ErrAuth.
func (e *AuthError) Is(target error) bool { return target == ErrAuth }

// echoMarker starts the part of Redis' "unknown command" reply that repeats
// the command's arguments, possibly truncated or escaped.
const echoMarker = "with args beginning with:"

// newAuthError builds the error for a refused AUTH. A server that does not
// know AUTH (renamed or disabled, or a proxy) may echo its arguments, and with
// them the password, so the echoed arguments are dropped and any remaining
// copy of the password is masked.
func newAuthError(addr, username, password string, reply redis.Error) *AuthError {
	if username == "" {
		username = "default"
	}
	text := string(reply)
	if i := strings.Index(text, echoMarker); i >= 0 {
		text = text[:i] + echoMarker + " (hidden)"
	}
	if password != "" {
		text = strings.ReplaceAll(text, password, "***")
	}
	return &AuthError{Addr: addr, Username: username, Err: redis.Error(text)}
}

// badOptions wraps ErrBadOptions with a description of the problem.
func badOptions(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadOptions}, args...)...)
}
