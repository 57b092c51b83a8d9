package pool

import (
	"context"

	"github.com/gomodule/redigo/redis"
)

// Dial opens a connection to addr that belongs to no pool, set up like the
// pooled ones (TLS, AUTH, CLIENT SETNAME, SELECT, as configured) and bounded
// by DialTimeout and ctx. It is for connections whose state can never be
// handed to another caller, such as pub/sub subscriptions: the caller owns
// it and must Close it. A node with a resolver (SetResolver) is dialled at
// the address the resolver gives now. Errors are as for Get; after Close it fails with
// ErrClosed. The Set's dial hook (NewSetWithDialHook) sees it as it sees
// the pooled ones. The connection is named (CLIENT SETNAME) with the Set's name
// at the time and keeps it: SetClientName does not rename it.
func (s *Set) Dial(ctx context.Context, addr string) (redis.Conn, error) {
	s.mu.Lock()
	closed, resolve := s.closed, s.resolvers[addr]
	s.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if resolve == nil { // a node whose address moves (SetResolver) has a name, not an address
		if err := checkAddr(addr); err != nil {
			return nil, err
		}
	}
	d := newDialer(addr, s.opts, false, resolve)
	d.names = s.names     // the name now; never renamed later
	return s.dial(ctx, d) // reported to the dial hook as the pooled ones are
}
