package pool

import (
	"context"

	"github.com/gomodule/redigo/redis"
)

// Dial opens a connection to addr that belongs to no pool, set up like the
// pooled ones (TLS, AUTH, CLIENT SETNAME, SELECT, as configured) and bounded
// by DialTimeout and ctx. It is for connections whose state can never be
// handed to another caller, such as pub/sub subscriptions: the caller owns
// it and must Close it. Errors are as for Get; after Close it fails with
// ErrClosed.
func (s *Set) Dial(ctx context.Context, addr string) (redis.Conn, error) {
	if err := checkAddr(addr); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, ErrClosed
	}
	return newDialer(addr, s.opts, false).dial(ctx)
}
