package shardisprom

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// OtherCause is the cause label of a server's error reply whose code is
// not one Redis defines (a script's error_reply, a module's code): its
// text may hold anything, a key or a secret, and would make the series
// unbounded.
const OtherCause = "other"

// serverCodes are the error codes Redis and Valkey reply with: the only
// ones taken as a cause label.
var serverCodes = map[string]bool{
	"ERR": true, "WRONGTYPE": true, "OOM": true, "NOSCRIPT": true, "BUSY": true, "BUSYKEY": true,
	"BUSYGROUP": true, "NOGROUP": true, "NOAUTH": true, "NOPERM": true, "WRONGPASS": true,
	"EXECABORT": true, "READONLY": true, "MASTERDOWN": true, "LOADING": true, "CLUSTERDOWN": true,
	"CROSSSLOT": true, "MOVED": true, "ASK": true, "TRYAGAIN": true, "NOREPLICAS": true,
	"MISCONF": true, "UNBLOCKED": true, "NOTBUSY": true, "NOGOODSLAVE": true, "NOMASTERLINK": true,
	"NOPROTO": true, "UNKILLABLE": true,
}

// errorCause is the cause label of an attempt that ended with outcome o
// and err: "tx_aborted" for a transaction a watched key aborted
// (shard.ErrTxAborted), the code of a server's error reply when Redis
// defines it (WRONGTYPE, OOM, CLUSTERDOWN, LOADING, ...; OtherCause for
// any other), "closed" for a closed client, "node_down" for a node marked
// down, "auth", "timeout", "canceled" or "dial" for a connection that
// could not be opened, "timeout" or "io" for a connection that failed
// after it was opened, and else the outcome's name (a caller's deadline
// is "timeout", its cancellation "canceled"). The values are few: fit
// for a label.
func errorCause(o shard.Outcome, err error) string {
	switch o {
	case shard.OutcomeTimeout, shard.OutcomeCanceled:
		return o.String()
	}
	var re redis.Error
	var de *pool.DialError
	var ne *shard.NodeError
	switch {
	case err == nil:
	case errors.Is(err, shard.ErrTxAborted):
		return "tx_aborted"
	case errors.As(err, &re):
		if code, _, _ := strings.Cut(string(re), " "); serverCodes[code] {
			return code
		}
		return OtherCause
	case errors.Is(err, shard.ErrClosed):
		return "closed"
	case errors.Is(err, shard.ErrNodeDown):
		return "node_down"
	case errors.As(err, &de), errors.Is(err, pool.ErrAuth):
		return dialCause(err)
	case errors.As(err, &ne):
		if isTimeout(err) {
			return "timeout"
		}
		return "io"
	}
	return o.String()
}

// dialCause is the cause of a failed dial: "timeout" for a deadline,
// "canceled", "auth" for refused credentials, "dial" for anything else.
func dialCause(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, pool.ErrAuth):
		return "auth"
	}
	return "dial"
}

func isTimeout(err error) bool {
	var te net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &te) && te.Timeout()
}
