package pool

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
)

// Set holds one redis.Pool per node address (and a second one per address
// for read-only connections), created on first use. It is safe for
// concurrent use. The zero value is not usable: call NewSet.
type Set struct {
	opts   Options  // validated, defaults applied
	onDial DialHook // see SetDialHook
	names  *names   // the connection name now (names.go)

	mu        sync.Mutex
	closed    bool
	nodes     map[string]*node
	resolvers map[string]func() (string, error) // see SetResolver
}

// node is everything kept for one address.
type node struct {
	rw *counted // pool for Get
	ro *counted // pool for GetReadOnly, nil until first used
}

// counted is a pool plus the dial counters kept by its dial function.
type counted struct {
	pool *redis.Pool
	// lender is the pool that Pool and ReadOnlyPool return (see Pool):
	// it borrows through Set.get, never through pool directly.
	lender     *redis.Pool
	dials      atomic.Int64
	dialErrors atomic.Int64
	removed    atomic.Bool // the pool was closed by Remove or Close
	// gen is bumped by DropIdle: a connection dialed in an earlier
	// generation is closed instead of being handed out again.
	gen atomic.Int64
}

// NewSet checks opts and returns an empty Set that dials with them.
func NewSet(opts Options) (*Set, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Set{opts: opts.withDefaults(), nodes: make(map[string]*node), names: newNames(opts.ClientName)}, nil
}

// Options returns the options the Set dials with, defaults filled in;
// ClientName is the name now (SetClientName).
func (s *Set) Options() Options {
	o := s.opts
	o.ClientName = s.ClientName()
	return o
}

// Get borrows a connection to addr; Close on the connection returns it to the
// pool. It waits (with Options.Wait) and dials within ctx: when ctx ends
// first, the error wraps ctx.Err(). A failed dial is a *DialError or an
// *AuthError, a full pool without Wait gives an error wrapping
// redis.ErrPoolExhausted, and after Close the error is ErrClosed. On error the
// returned connection is nil.
func (s *Set) Get(ctx context.Context, addr string) (redis.Conn, error) {
	return s.get(ctx, addr, false)
}

// GetReadOnly is Get for Redis Cluster replicas: it borrows from a separate
// pool for addr whose connections sent READONLY while dialing, so they serve
// reads of the slots their primary owns. Plain Redis servers refuse READONLY,
// which makes the dial fail with a *DialError. So does a replica that has
// not synced with its master yet (INFO replication shows replication offset
// 0: restarted without its data, or just attached), which would answer
// reads from an empty dataset; a server that refuses INFO is not checked.
func (s *Set) GetReadOnly(ctx context.Context, addr string) (redis.Conn, error) {
	return s.get(ctx, addr, true)
}

func (s *Set) get(ctx context.Context, addr string, readOnly bool) (redis.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, errtext.Errorf("shardis: get connection to %s: %w", addr, err)
	}
	// A pool closed by a concurrent Remove is replaced by a fresh one, for
	// as long as the Set is open and ctx is not done.
	for {
		cp, err := s.lookup(addr, readOnly)
		if err != nil {
			return nil, err
		}
		c, err := cp.get(ctx)
		if err == nil {
			if cerr := ended(ctx); cerr != nil {
				// The borrow check made no round trip for a context
				// that had ended (dialer.ping): the connection goes
				// back untouched, and the caller gets ctx's error.
				c.Close()
				return nil, errtext.Errorf("shardis: get connection to %s: %w", addr, cerr)
			}
			return c, nil
		}
		var de *DialError
		var ae *AuthError
		if errors.As(err, &de) || errors.As(err, &ae) {
			return nil, err
		}
		if s.isClosed() {
			return nil, ErrClosed
		}
		if cp.removed.Load() && ctx.Err() == nil {
			continue
		}
		return nil, errtext.Errorf("shardis: get connection to %s: %w", addr, err)
	}
}

// get borrows a connection from cp's pool. redigo's pool (v1.9.3) panics
// with "send on closed channel" when a GetContext that waits for a vacancy
// (Wait with MaxActive) is woken by the pool's Close and finds its
// context ended when it looks again: it gives the vacancy back to the
// channel Close just closed. Nothing of the pool has changed by then, so
// for a pool that was closed that panic is the context's error.
func (cp *counted) get(ctx context.Context) (c redis.Conn, err error) {
	defer func() {
		if r := recover(); r != nil {
			re, ok := r.(runtime.Error)
			if !ok || !cp.removed.Load() || ctx.Err() == nil ||
				!strings.Contains(re.Error(), "send on closed channel") {
				panic(r)
			}
			c, err = nil, ctx.Err()
		}
	}()
	return cp.pool.GetContext(ctx)
}

// Pool returns a redigo pool for addr, for callers that use redigo
// directly, creating the pool behind Get for addr if needed. Its Get and
// GetContext borrow through Set.Get (same options, limits, waits and
// errors: *DialError, *AuthError, ErrClosed), and Close on a connection
// gives it back there. It keeps no connections of its own: its Stats
// count only the connections it has lent and not yet taken back (Set.Stats
// counts the Set's). It stays the same pool until Remove(addr); one taken
// earlier keeps working after Remove, as Set.Get does, and after Close of
// the Set, whenever it was taken, every Get on it fails with ErrClosed
// (never redigo's untyped error for a closed pool, nor its panic). There
// is no need to Close it. For a malformed address it returns a pool whose
// every connection fails with that error, never nil.
func (s *Set) Pool(addr string) *redis.Pool {
	cp, err := s.lookup(addr, false)
	if err != nil {
		return failingPool(err)
	}
	return cp.lender
}

// ReadOnlyPool is Pool for the READONLY connections behind GetReadOnly.
func (s *Set) ReadOnlyPool(addr string) *redis.Pool {
	cp, err := s.lookup(addr, true)
	if err != nil {
		return failingPool(err)
	}
	return cp.lender
}

// Addrs returns the addresses that have pools, sorted.
func (s *Set) Addrs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	addrs := make([]string, 0, len(s.nodes))
	for addr := range s.nodes {
		addrs = append(addrs, addr)
	}
	slices.Sort(addrs)
	return addrs
}

// Remove closes and forgets the pools of addr, for example when a node left
// the cluster. Idle connections close now; borrowed ones close when they are
// returned. Removing an unknown address does nothing. A later Get for addr
// starts a new pool. After Close it returns ErrClosed.
func (s *Set) Remove(addr string) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	n := s.nodes[addr]
	delete(s.nodes, addr)
	s.mu.Unlock()
	if n != nil {
		n.close()
	}
	return nil
}

// DropIdle makes the pools of addr close, instead of handing out again,
// every connection they hold now: the idle ones when a Get comes across
// them, the borrowed ones when a Get comes across them once they are back
// (until then they wait among the idle ones). The pools themselves stay,
// so MaxActive keeps counting every open connection (Remove would start
// new pools next to connections still borrowed). Use it when a node
// failed: its idle connections are likely dead too. Unknown addresses and
// a closed Set are ignored.
func (s *Set) DropIdle(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[addr]; n != nil {
		for _, cp := range []*counted{n.rw, n.ro} {
			if cp != nil {
				cp.gen.Add(1)
			}
		}
	}
}

// errDropped rejects a pooled connection dialed before DropIdle.
var errDropped = errors.New("shardis: connection dropped after a node failure")

// Close closes every pool. Idle connections close now; borrowed ones close
// when they are returned. Later calls to Get fail with ErrClosed. Close is
// idempotent.
func (s *Set) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	nodes := s.nodes
	s.nodes = nil
	s.mu.Unlock()
	for _, n := range nodes {
		n.close()
	}
	return nil
}

// String describes the Set by its options (Options.String), the
// password masked. Without it fmt would print the Set's fields, the
// password among them, for any verb.
func (s *Set) String() string {
	if s == nil {
		return "pool.Set(nil)"
	}
	return fmt.Sprintf("pool.Set{%s Addrs=%q}", s.Options(), s.Addrs())
}

// GoString is String, for %#v.
func (s *Set) GoString() string { return s.String() }

func (s *Set) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// lookup returns the pool for addr, creating the node and pool as needed.
func (s *Set) lookup(addr string, readOnly bool) (*counted, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	n := s.nodes[addr]
	resolve := s.resolvers[addr]
	if n == nil {
		if resolve == nil {
			if err := checkAddr(addr); err != nil {
				return nil, err
			}
		}
		n = &node{rw: s.newPool(addr, false, resolve)}
		s.nodes[addr] = n
	}
	if !readOnly {
		return n.rw, nil
	}
	if n.ro == nil {
		n.ro = s.newPool(addr, true, resolve)
	}
	return n.ro, nil
}

func (s *Set) newPool(addr string, readOnly bool, resolve func() (string, error)) *counted {
	d := newDialer(addr, s.opts, readOnly, resolve)
	d.names, d.pooled = s.names, true
	cp := &counted{}
	// The pool that Pool hands out: redigo's own, once closed, fails
	// with an error that matches nothing, and panics for a waiting
	// GetContext whose context has ended. This one has no limit, no
	// wait and no idle connections (every connection it takes back goes
	// back to the Set at once), and it is never closed by the Set.
	cp.lender = &redis.Pool{
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return s.get(ctx, addr, readOnly)
		},
	}
	idleTimeout := s.opts.IdleTimeout
	if idleTimeout == Never {
		idleTimeout = 0
	}
	cp.pool = &redis.Pool{
		MaxIdle:         s.opts.MaxIdle,
		MaxActive:       s.opts.MaxActive,
		IdleTimeout:     idleTimeout,
		MaxConnLifetime: s.opts.MaxConnLifetime,
		Wait:            s.opts.Wait,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			if ctx.Value(idleBorrowKey{}) != nil {
				return nil, errNotIdle // renaming takes idle connections only
			}
			cp.dials.Add(1)
			gen := cp.gen.Load()
			c, err := s.dial(ctx, d)
			if err != nil {
				cp.dialErrors.Add(1)
				return nil, err
			}
			if lc, ok := c.(*liveConn); ok {
				lc.gen = gen
			}
			noteBorrowed(ctx, c)
			return c, nil
		},
	}
	cp.pool.TestOnBorrowContext = func(ctx context.Context, c redis.Conn, lastUsed time.Time) error {
		if b, ok := ctx.Value(idleBorrowKey{}).(*idleBorrow); ok {
			b.passed.Store(true)
			ctx = b.ctx // not the borrow's own, which getIdle may cancel
		}
		lc, _ := c.(*liveConn)
		if lc != nil && lc.gen < cp.gen.Load() {
			return errDropped
		}
		// Counted as lent before the check: a callback of the last
		// borrower's context that runs late (failLend) then no longer
		// matches, and cannot fail the connection between a passed
		// check and its handing out. A connection that fails the check
		// is closed, never handed out.
		noteBorrowed(ctx, c)
		err := d.ping(ctx, c, lastUsed)
		if err == nil && lc != nil {
			// A connection given back under an old name (names.go).
			// Under an ended context it cannot be renamed now, nor
			// given back (the rename on return would make the caller
			// wait): it is dropped, as a failed rename is.
			if cur, stale := lc.stale(); stale {
				if err = ended(ctx); err == nil {
					err = lc.rename(ctx, cur)
				}
			}
		}
		return err
	}
	return cp
}

func (n *node) close() {
	for _, cp := range []*counted{n.rw, n.ro} {
		if cp != nil {
			cp.removed.Store(true)
			cp.pool.Close()
		}
	}
}

// failingPool is a pool whose every connection fails with err.
func failingPool(err error) *redis.Pool {
	return &redis.Pool{
		DialContext: func(context.Context) (redis.Conn, error) { return nil, err },
	}
}

// liveSlot receives the connection a Get hands out, from the dial or the
// borrow check, so that GetAbortable can reach its socket.
type liveSlot struct {
	lc   *liveConn
	lend uint64 // the borrow's number (liveConn.lent)
}

type liveSlotKey struct{}

// noteBorrowed counts a borrow of c and records it in the slot that ctx
// carries, if any.
func noteBorrowed(ctx context.Context, c redis.Conn) {
	lc, ok := c.(*liveConn)
	if !ok {
		return
	}
	n := lc.lent()
	if slot, ok := ctx.Value(liveSlotKey{}).(*liveSlot); ok {
		slot.lc, slot.lend = lc, n
	}
}

// GetProbed is GetAbortable that also returns closed, which reports,
// without a round trip, without blocking and without consuming anything,
// whether the server has closed the borrowed connection since it was
// handed out (a CLIENT KILL, its idle timeout, a restart), sent bytes
// nobody asked for, or the connection has failed or been given back. It
// looks at the socket as the pool's borrow check does (a TLS connection
// with bytes waiting is read for at most a few milliseconds). It is for a
// caller about to write what must not run blind (a transaction's MULTI),
// or one that holds the connection across idle spells (an automatic
// pipeline's writer, which sends batch after batch on it): a write on a
// connection the server has closed fails only once it was sent, with an
// outcome the caller cannot know; noticed first, nothing is sent. Call
// closed only from the goroutine that uses the connection, while no reply
// is awaited on it; it reports false when it cannot tell (a socket that
// cannot be peeked at).
func (s *Set) GetProbed(ctx context.Context, addr string, readOnly bool) (c redis.Conn, abort func(), closed func() bool, err error) {
	slot := &liveSlot{}
	c, err = s.get(context.WithValue(ctx, liveSlotKey{}, slot), addr, readOnly)
	if err != nil {
		return nil, nil, nil, err
	}
	abort = func() {
		if slot.lc != nil {
			slot.lc.closeLend(slot.lend)
		}
	}
	closed = func() bool {
		return slot.lc != nil && slot.lc.closedSinceLend(slot.lend)
	}
	return c, abort, closed, nil
}

// GetAbortable is Get (GetReadOnly when readOnly is set) that also returns
// abort, which closes the borrowed connection's socket at once, from any
// goroutine: reads and writes in progress on it fail immediately and the
// pool never hands the connection out again. It is how a caller whose
// context ends cuts its I/O short without a goroutine of its own. Once
// the connection has been returned (Close), abort may still be called (a
// context's callback that runs late) but no longer touches it: the next
// caller's connection is never closed by an earlier one's abort.
func (s *Set) GetAbortable(ctx context.Context, addr string, readOnly bool) (c redis.Conn, abort func(), err error) {
	slot := &liveSlot{}
	c, err = s.get(context.WithValue(ctx, liveSlotKey{}, slot), addr, readOnly)
	if err != nil {
		return nil, nil, err
	}
	return c, func() {
		if slot.lc != nil {
			slot.lc.closeLend(slot.lend)
		}
	}, nil
}
