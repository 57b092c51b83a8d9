package shardisprom

import (
	"github.com/shardis/shardis/shard"
)

// OtherCause is the cause label of a server's error reply whose code is
// not one Redis defines (a script's error_reply, a module's code): its
// text may hold anything, a key or a secret, and would make the series
// unbounded. It is shard.CauseOther.
const OtherCause = shard.CauseOther

// errorCause is the cause label of an attempt that ended with outcome o
// and err: the outcome's name for a caller's deadline ("timeout") or
// cancellation ("canceled"), else shard.ErrorCause's (tx_aborted, a
// server's error code Redis defines or OtherCause, closed, node_down,
// auth, dial, timeout, canceled, io), else the outcome's name. The
// values are few: fit for a label.
func errorCause(o shard.Outcome, err error) string {
	switch o {
	case shard.OutcomeTimeout, shard.OutcomeCanceled:
		return o.String()
	}
	if c := shard.ErrorCause(err); c != "" {
		return c
	}
	return o.String()
}
