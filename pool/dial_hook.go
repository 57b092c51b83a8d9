package pool

import (
	"context"
	"time"

	"github.com/gomodule/redigo/redis"
)

// DialHook observes a dial attempt: the address, whether the connection
// sends READONLY, how long the dial took (connect, TLS handshake, setup
// commands) and its error (nil on success). It never sees the password.
type DialHook func(ctx context.Context, addr string, readOnly bool, took time.Duration, err error)

// NewSetWithDialHook is NewSet with a hook called after every dial
// attempt (nil: none).
func NewSetWithDialHook(opts Options, hook DialHook) (*Set, error) {
	s, err := NewSet(opts)
	if err != nil {
		return nil, err
	}
	s.onDial = hook
	return s, nil
}

// dial opens a connection with d, reported to the Set's dial hook.
func (s *Set) dial(ctx context.Context, d *dialer) (redis.Conn, error) {
	if s.onDial == nil {
		return d.dial(ctx)
	}
	start := time.Now()
	c, err := d.dial(ctx)
	s.onDial(ctx, d.addr, d.readOnly, time.Since(start), err)
	return c, err
}
