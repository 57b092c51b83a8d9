package shard

import (
	"context"
	"errors"
	"sync"

	"github.com/gomodule/redigo/redis"
)

// Conn returns a redigo-compatible connection that routes each command to
// its own shard, so that existing redigo code works unchanged:
//
//	conn := client.Conn()
//	defer conn.Close()
//	v, err := redis.String(conn.Do("GET", "user:1"))
//
// Send queues a command, Flush sends everything queued as one pipeline
// (one round trip per shard, in parallel) and Receive returns the replies
// in order. The returned value implements redis.Conn and
// redis.ConnWithContext; it holds no connection of its own, so it is cheap
// to create. Like a redigo connection, it is meant for one goroutine at a
// time.
func (c *Client) Conn() redis.Conn { return &routedConn{c: c} }

// routedConn adapts a Client to redis.Conn.
type routedConn struct {
	c       *Client
	mu      sync.Mutex
	pending Pipeline // sent but not flushed
	replies []Result // flushed but not received
	closed  bool
}

var (
	_ redis.Conn            = (*routedConn)(nil)
	_ redis.ConnWithContext = (*routedConn)(nil)
)

// errConnClosed is returned by a routedConn after Close.
var errConnClosed = errors.New("shardis: connection closed")

func (rc *routedConn) Close() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.closed = true
	rc.pending.cmds, rc.replies = nil, nil
	return nil
}

func (rc *routedConn) Err() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return errConnClosed
	}
	if rc.c.closed.Load() {
		return ErrClosed
	}
	return nil
}

func (rc *routedConn) Do(name string, args ...any) (any, error) {
	return rc.DoContext(context.Background(), name, args...)
}

// DoContext sends any queued commands plus this one and returns this one's
// reply. As in redigo, an empty name only flushes and returns the reply of
// the last queued command.
func (rc *routedConn) DoContext(ctx context.Context, name string, args ...any) (any, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return nil, errConnClosed
	}
	if name == "" && len(rc.pending.cmds) == 0 && len(rc.replies) == 0 {
		return nil, nil
	}
	if name != "" {
		rc.pending.c = rc.c
		rc.pending.Send(name, args...)
	}
	if err := rc.flushLocked(ctx); err != nil {
		return nil, err
	}
	last := rc.replies[len(rc.replies)-1]
	rc.replies = rc.replies[:0]
	return last.Reply, last.Err
}

func (rc *routedConn) Send(name string, args ...any) error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return errConnClosed
	}
	rc.pending.c = rc.c
	rc.pending.Send(name, args...)
	return nil
}

func (rc *routedConn) Flush() error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return errConnClosed
	}
	return rc.flushLocked(context.Background())
}

func (rc *routedConn) flushLocked(ctx context.Context) error {
	if len(rc.pending.cmds) == 0 {
		return nil
	}
	rc.pending.c = rc.c
	res, err := rc.pending.Exec(ctx)
	if err != nil {
		return err
	}
	rc.replies = append(rc.replies, res...)
	return nil
}

func (rc *routedConn) Receive() (any, error) {
	return rc.ReceiveContext(context.Background())
}

// ReceiveContext returns the next reply, flushing queued commands first
// when nothing has been flushed yet.
func (rc *routedConn) ReceiveContext(ctx context.Context) (any, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return nil, errConnClosed
	}
	if len(rc.replies) == 0 {
		if err := rc.flushLocked(ctx); err != nil {
			return nil, err
		}
	}
	if len(rc.replies) == 0 {
		return nil, errors.New("shardis: Receive with no command sent")
	}
	r := rc.replies[0]
	rc.replies = rc.replies[1:]
	return r.Reply, r.Err
}
