package reshard

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
)

// delIfSame deletes a key only while it still holds the value that was
// dumped, so that a key changed meanwhile is never deleted.
var delIfSame = redis.NewScript(1, `if redis.call('DUMP', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

// dumpMove moves keys through the mover: DUMP and PTTL on the old node,
// RESTORE (without REPLACE: a key the new owner has is kept, it is the
// newer one) on the new node, then a delete on the old node of each copy
// that has not changed since it was dumped. A key moved by a client in
// between is simply gone from the old node, and its RESTORE meets BUSYKEY.
func (m *mover) dumpMove(ctx context.Context, conn redis.Conn, src, dst shard.Node, keys []string) error {
	for _, k := range keys {
		conn.Send("DUMP", k)
		conn.Send("PTTL", k)
	}
	if err := conn.Flush(); err != nil {
		return &shard.NodeError{Node: src, Err: err}
	}
	type dumped struct {
		key     string
		payload []byte
		ttl     int64
	}
	var items []dumped
	for _, k := range keys {
		payload, err1 := redis.Bytes(redis.ReceiveWithTimeout(conn, m.opts.Timeout))
		ttl, err2 := redis.Int64(redis.ReceiveWithTimeout(conn, m.opts.Timeout))
		if err1 == redis.ErrNil || ttl == -2 {
			continue // gone meanwhile
		}
		if err1 != nil {
			return &shard.NodeError{Node: src, Err: fmt.Errorf("DUMP %q: %w", k, err1)}
		}
		if err2 != nil {
			return &shard.NodeError{Node: src, Err: fmt.Errorf("PTTL %q: %w", k, err2)}
		}
		if ttl < 0 {
			ttl = 0
		}
		items = append(items, dumped{key: k, payload: payload, ttl: ttl})
	}
	if len(items) == 0 {
		return nil
	}
	dconn, err := m.pools.Get(ctx, dst.Addr)
	if err != nil {
		return &shard.NodeError{Node: dst, Err: err}
	}
	defer dconn.Close()
	for _, it := range items {
		dconn.Send("RESTORE", it.key, it.ttl, it.payload)
	}
	if err := dconn.Flush(); err != nil {
		return &shard.NodeError{Node: dst, Err: err}
	}
	for _, it := range items {
		_, err := redis.ReceiveWithTimeout(dconn, m.opts.Timeout)
		if isReplyError(err, "BUSYKEY") {
			m.busy.Add(1)
			continue
		}
		if err != nil {
			return &shard.NodeError{Node: dst, Err: fmt.Errorf("RESTORE %q: %w", it.key, err)}
		}
	}
	for _, it := range items {
		if err := delIfSame.SendHash(conn, it.key, it.payload); err != nil {
			return &shard.NodeError{Node: src, Err: err}
		}
	}
	if err := conn.Flush(); err != nil {
		return &shard.NodeError{Node: src, Err: err}
	}
	var firstErr error
	for range items {
		if _, err := redis.ReceiveWithTimeout(conn, m.opts.Timeout); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if isReplyError(firstErr, "NOSCRIPT") {
		// The script was not loaded yet: load it and delete again.
		for _, it := range items {
			if _, err := delIfSame.DoContext(ctx, conn, it.key, it.payload); err != nil {
				return &shard.NodeError{Node: src, Err: err}
			}
		}
		return nil
	}
	if firstErr != nil {
		return &shard.NodeError{Node: src, Err: firstErr}
	}
	return nil
}
