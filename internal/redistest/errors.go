package redistest

import (
	"errors"
	"strings"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrUnavailable means redis-server or redis-cli is not on PATH.
	ErrUnavailable = errors.New("shardis: redis-server or redis-cli not found on PATH")
	// ErrInvalid means Options, or another argument, is invalid.
	ErrInvalid = errors.New("shardis: invalid redistest input")
	// ErrTimeout means a wait (start, stop, cluster convergence) did not
	// finish within its deadline.
	ErrTimeout = errors.New("shardis: redistest wait timed out")
	// ErrStopped means the server was stopped for good by Stop and its
	// directory is gone.
	ErrStopped = errors.New("shardis: redis server stopped")
	// ErrNotRunning means the server process is not running (it was killed
	// or it exited), so it cannot be paused or resumed.
	ErrNotRunning = errors.New("shardis: redis server not running")
	// ErrStartFailed means redis-server exited or never answered PING.
	ErrStartFailed = errors.New("shardis: redis server failed to start")
)

// ReplyError is an error reply from Redis (a RESP "-" line), as returned by
// Server.Do.
type ReplyError struct {
	// Message is the reply without the leading '-', e.g.
	// "WRONGPASS invalid username-password pair or user is disabled.".
	Message string
}

// Error returns the reply prefixed with "shardis: redis: ".
func (e *ReplyError) Error() string { return "shardis: redis: " + e.Message }

// Code returns the first word of the reply, e.g. "ERR", "MOVED", "NOAUTH".
func (e *ReplyError) Code() string {
	code, _, _ := strings.Cut(e.Message, " ")
	return code
}
