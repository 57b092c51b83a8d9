package sentinel

import (
	"errors"
	"fmt"

	"github.com/shardis/shardis/internal/errtext"
)

var (
	// ErrBadReply is wrapped by every error about a reply that does not
	// have the shape the protocol promises.
	ErrBadReply = errors.New("shardis: sentinel: malformed reply")
	// ErrUnknownMaster means a Sentinel answered that it does not monitor
	// a master of that name.
	ErrUnknownMaster = errors.New("shardis: sentinel: unknown master name")
	// ErrNoSentinel means no Sentinel of the set gave a usable answer:
	// each failed to connect or to answer, answered with an error, or
	// named a master that failed the caller's check (see SetError.Errs
	// for which).
	ErrNoSentinel = errors.New("shardis: sentinel: no Sentinel answered")
	// ErrNotMaster means the server that the Sentinels named as master
	// says (ROLE) that it is not one, for example in the middle of a
	// failover.
	ErrNotMaster = errors.New("shardis: sentinel: server is not a master")
	// ErrBadOptions is wrapped by every configuration error of New.
	ErrBadOptions = errors.New("shardis: sentinel: bad options")
)

// badReply returns an error wrapping ErrBadReply that describes what was
// wrong with a reply to cmd.
func badReply(cmd, format string, args ...any) error {
	return fmt.Errorf("%w to %s: %s", ErrBadReply, cmd, fmt.Sprintf(format, args...))
}

// QueryError is the failure of one Sentinel while the set was asked.
type QueryError struct {
	// Addr is the Sentinel's address.
	Addr string
	// Err is what went wrong with it.
	Err error
}

// Error implements error: "sentinel <addr>: <cause>", the cause without
// its package prefix (this package's or the module's), which the error
// that holds the QueryError (a *SetError) gives once.
func (e *QueryError) Error() string {
	return "sentinel " + e.Addr + ": " + errtext.Trim(e.Err.Error(), errtext.Prefix+"sentinel: ", errtext.Prefix)
}

// Unwrap returns the cause.
func (e *QueryError) Unwrap() error { return e.Err }

// SetError reports that no Sentinel of a set gave a usable answer (each
// Sentinel's own failure, in Errs, says why: unreachable, an error reply,
// or a master that failed the check). It matches
// ErrNoSentinel with errors.Is, and each Sentinel's own failure with
// errors.As or errors.Is on Errs.
type SetError struct {
	// Master is the master name that was asked about.
	Master string
	// Errs holds one *QueryError per Sentinel asked, in the order asked.
	Errs []error
}

// Error implements error.
func (e *SetError) Error() string {
	msg := fmt.Sprintf("shardis: sentinel: no usable answer from the Sentinels for master %q", e.Master)
	for _, err := range e.Errs {
		msg += "; " + err.Error()
	}
	return msg
}

// Unwrap returns ErrNoSentinel and every Sentinel's failure.
func (e *SetError) Unwrap() []error { return append([]error{ErrNoSentinel}, e.Errs...) }
