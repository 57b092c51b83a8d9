package shard

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/gomodule/redigo/redis"
)

// ErrPubSubReply is wrapped by the error for a reply that a connection in
// subscribe mode cannot have sent: an unknown push type, or a known one of
// the wrong shape. The connection is dropped and dialled again.
var ErrPubSubReply = errors.New("shardis: unexpected reply in subscribe mode")

// parsePush turns one reply read on a connection in subscribe mode into
// the value redigo's PubSubConn would give: a redis.Message (message,
// pmessage, smessage), a redis.Subscription ((p|s)(un)subscribe) or a
// redis.Pong (pong, or the +PONG of a connection not yet subscribed). Any
// other reply is an error wrapping ErrPubSubReply. Server error replies do
// not come here: the connection returns them as redis.Error.
func parsePush(reply any) (any, error) {
	if s, ok := reply.(string); ok && s == "PONG" {
		return redis.Pong{}, nil
	}
	parts, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrPubSubReply, describeReply(reply))
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: empty array", ErrPubSubReply)
	}
	kind, ok := pushKind(parts[0])
	if !ok {
		return nil, fmt.Errorf("%w: push type is %s", ErrPubSubReply, describeReply(parts[0]))
	}
	bad := func(what string) error {
		return fmt.Errorf("%w: %q push with %s", ErrPubSubReply, kind, what)
	}
	switch kind {
	case "message", "smessage":
		if len(parts) != 3 {
			return nil, bad(strconv.Itoa(len(parts)) + " elements")
		}
		ch, ok1 := text(parts[1])
		data, ok2 := parts[2].([]byte)
		if !ok1 || !ok2 {
			return nil, bad("a non-string channel or payload")
		}
		return redis.Message{Channel: ch, Data: data}, nil
	case "pmessage":
		if len(parts) != 4 {
			return nil, bad(strconv.Itoa(len(parts)) + " elements")
		}
		pat, ok1 := text(parts[1])
		ch, ok2 := text(parts[2])
		data, ok3 := parts[3].([]byte)
		if !ok1 || !ok2 || !ok3 {
			return nil, bad("a non-string pattern, channel or payload")
		}
		return redis.Message{Pattern: pat, Channel: ch, Data: data}, nil
	case "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe":
		if len(parts) != 3 {
			return nil, bad(strconv.Itoa(len(parts)) + " elements")
		}
		count, ok := parts[2].(int64)
		if !ok {
			return nil, bad("a non-integer count")
		}
		// An unsubscribe from nothing names no channel (a null).
		ch, ok := text(parts[1])
		if !ok && parts[1] != nil {
			return nil, bad("a non-string channel")
		}
		return redis.Subscription{Kind: kind, Channel: ch, Count: int(count)}, nil
	case "pong":
		if len(parts) != 2 {
			return nil, bad(strconv.Itoa(len(parts)) + " elements")
		}
		data, ok := text(parts[1])
		if !ok {
			return nil, bad("a non-string payload")
		}
		return redis.Pong{Data: data}, nil
	}
	if len(kind) > 32 {
		kind = kind[:32] + "..."
	}
	return nil, fmt.Errorf("%w: unknown push type %q", ErrPubSubReply, kind)
}

// pushKinds are the push types, as constants: converting the reply's
// bytes would allocate for every message.
var pushKinds = [...]string{"message", "pmessage", "smessage", "subscribe", "psubscribe", "ssubscribe",
	"unsubscribe", "punsubscribe", "sunsubscribe", "pong"}

// pushKind returns the push type of a reply's first element; an unknown
// one is returned as it is, for the error message.
func pushKind(v any) (string, bool) {
	if b, ok := v.([]byte); ok {
		for _, k := range pushKinds {
			if string(b) == k {
				return k, true
			}
		}
	}
	return text(v)
}

// text returns a bulk or status string.
func text(v any) (string, bool) {
	switch s := v.(type) {
	case []byte:
		return string(s), true
	case string:
		return s, true
	}
	return "", false
}

// describeReply names a reply's type without its contents (a payload may be
// anything, secrets included).
func describeReply(v any) string {
	switch x := v.(type) {
	case nil:
		return "a null"
	case int64:
		return "an integer"
	case string:
		return "a status reply"
	case []byte:
		return "a bulk string"
	case []any:
		return fmt.Sprintf("an array of %d", len(x))
	}
	return fmt.Sprintf("a %T", v)
}
