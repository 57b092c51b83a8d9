package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
)

// The connection name (CLIENT SETNAME) of a Set can change at run time
// (SetClientName): a client that changes the topology it routes by says
// so in its connections' names. Every pooled connection remembers which
// generation of the name it carries (liveConn.named) and is brought up to
// date by the goroutine that owns it at the time:
//
//   - SetClientName borrows every idle connection (the borrow check
//     renames it) and gives it back; these borrows take idle
//     connections only, never dialing one nor waiting for one to be
//     given back (getIdle);
//   - a connection borrowed at the time is renamed when it comes back
//     (the pool's Close sends Do(""), which checks the generation: one
//     atomic load per return; the rename waits at most
//     returnRenameTimeout, the caller's Close waiting for it; a
//     caller's own Do("") renames nothing), and again, if need be, when
//     it is next borrowed (the pool's borrow check);
//   - new connections are dialed with the current name.
//
// A rename that fails closes the connection instead. Connections that
// belong to no pool (Dial) are dialed with the current name and keep it.

// clientName is one generation of a Set's connection name.
type clientName struct {
	name string
	gen  int64
}

// names holds a Set's current connection name. SetClientName changes
// it under the Set's mu, and renames the connections without any lock
// held: that may wait on a hung server, and a later SetClientName must
// not wait for an earlier one's renaming, beyond its own context.
type names struct {
	cur atomic.Pointer[clientName]
}

func newNames(name string) *names {
	n := &names{}
	n.cur.Store(&clientName{name: name})
	return n
}

// checkClientName accepts what CLIENT SETNAME accepts: printable ASCII
// without spaces (or nothing).
func checkClientName(name string) error {
	for _, r := range name {
		if r <= ' ' || r > '~' {
			return badOptions("ClientName %q may hold only printable ASCII without spaces", name)
		}
	}
	return nil
}

// ClientName returns the name (CLIENT SETNAME) the Set's connections are
// dialed with now: Options.ClientName, or what SetClientName set last.
func (s *Set) ClientName() string { return s.names.cur.Load().name }

// SetClientName changes the name (CLIENT SETNAME) of the Set's pooled
// connections: new connections are dialed with it, every idle one is
// renamed (or closed, when the rename fails) before SetClientName
// returns, and one borrowed now is renamed when it is given back (Close;
// a server that does not answer that rename within 200 ms gets the
// connection closed instead, so that Close does not wait on a hung
// server), or at the latest before it is handed out again. A connection
// given back while SetClientName runs may sit idle under the old name
// until it is next borrowed, where it is renamed before use. Renaming
// neither dials a connection nor waits for a borrowed one to be given
// back. An empty name clears the names. Connections made by Dial keep the
// name they were dialed with.
//
// A name with spaces or characters other than printable ASCII gives an
// error wrapping ErrBadOptions and changes nothing; after Close the error
// is ErrClosed. When ctx ends first the name is changed but some idle
// connections may not have been renamed yet (the error wraps ctx.Err()):
// they are renamed when next borrowed. Calls do not wait for each other:
// one made while another renames sets its name at once, and the renaming
// of both brings every idle connection to the latest name.
func (s *Set) SetClientName(ctx context.Context, name string) error {
	if err := checkClientName(name); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	cur := s.names.cur.Load()
	if cur.name == name {
		s.mu.Unlock()
		return nil
	}
	s.names.cur.Store(&clientName{name: name, gen: cur.gen + 1})
	var pools []*counted
	for _, n := range s.nodes {
		for _, cp := range []*counted{n.rw, n.ro} {
			if cp != nil {
				pools = append(pools, cp)
			}
		}
	}
	s.mu.Unlock()
	// Each node's idle connections are renamed by a goroutine of its
	// own: a rename is one round trip per connection.
	var wg sync.WaitGroup
	errs := make([]error, len(pools))
	for i, cp := range pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = cp.renameIdle(ctx)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return errtext.Errorf("shardis: renaming idle connections: %w", err)
		}
	}
	return nil
}

// renameIdle borrows every idle connection of the pool once (the borrow
// check renames a connection that carries an old name, or drops it) and
// gives them all back. Only ctx's end is an error: a connection that
// cannot be borrowed is not idle any more.
func (cp *counted) renameIdle(ctx context.Context) error {
	var held []redis.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for n := cp.pool.IdleCount(); n > 0 && cp.pool.IdleCount() > 0; n-- {
		// ended, not ctx.Err(): a deadline that has passed before its
		// timer fired made the borrow drop the connections it came
		// across (the borrow check), which is no "nothing idle".
		if err := ended(ctx); err != nil {
			return err
		}
		c, err := cp.getIdle(ctx)
		if err != nil {
			if cerr := ended(ctx); cerr != nil {
				return cerr
			}
			return nil
		}
		held = append(held, c)
	}
	return nil
}

// errNotIdle is the dial's answer to a borrow of getIdle's: the pool had
// no idle connection to hand it.
var errNotIdle = errors.New("shardis: no idle connection to rename")

// idleBorrowKey marks the context of a borrow of getIdle's; its value is
// the *idleBorrow.
type idleBorrowKey struct{}

// idleBorrow is one borrow of getIdle's.
type idleBorrow struct {
	// ctx is getIdle's caller's: the borrow check renames under it, not
	// under the borrow's own context, which getIdle may cancel.
	ctx context.Context
	// passed is set when the pool hands the borrow check a connection:
	// the borrow waits no more.
	passed atomic.Bool
}

// getIdle borrows an idle connection of the pool, or none: the count
// taken before may be stale, as another caller can borrow the connection
// meanwhile, and a borrow of the pool's own would then dial a connection
// to rename (or wait, with MaxActive and Wait, for one to be given
// back, which a blocking command may hold for ever). The dial refuses
// such a borrow (errNotIdle). The pool waits for a free slot before it
// looks at its idle connections, and a slot is free whenever one is
// idle: so a borrow still waiting while none is idle has nothing to
// rename, and is cancelled (a connection given back is renamed on its
// return).
func (cp *counted) getIdle(ctx context.Context) (redis.Conn, error) {
	b := &idleBorrow{ctx: ctx}
	bctx, cancel := context.WithCancel(context.WithValue(ctx, idleBorrowKey{}, b))
	defer cancel()
	if cp.pool.Wait && cp.pool.MaxActive > 0 {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-bctx.Done():
					return
				case <-tick.C:
					if !b.passed.Load() && cp.pool.IdleCount() == 0 {
						cancel()
						return
					}
				}
			}
		}()
	}
	return cp.get(bctx)
}

// stale reports whether lc carries an older name than the Set's.
func (lc *liveConn) stale() (*clientName, bool) {
	if lc.names == nil {
		return nil, false
	}
	cur := lc.names.cur.Load()
	return cur, cur.gen != lc.named
}

// rename sends CLIENT SETNAME with the current name, bounded by timeout;
// on failure the connection is closed (Err reports it), so that the pool
// drops it instead of keeping it under the old name.
func (lc *liveConn) rename(ctx context.Context, cur *clientName) error {
	ctx, cancel := context.WithTimeout(ctx, lc.renameTimeout())
	defer cancel()
	// Anything but OK (QUEUED inside a MULTI, a refusal in subscribed
	// mode) leaves the connection in no state to be pooled.
	changed := lc.changed.Load() // the Set's own name is no change of state
	reply, err := lc.DoContext(ctx, "CLIENT", "SETNAME", cur.name)
	lc.changed.Store(changed)
	if err == nil && reply != okReply {
		err = fmt.Errorf("unexpected reply %v", reply)
	}
	if err != nil {
		lc.fail(fmt.Errorf("shardis: CLIENT SETNAME: %w", err))
		return lc.Err()
	}
	lc.named = cur.gen
	return nil
}

// renameTimeout bounds one rename: the read timeout, or a second when
// reads wait forever.
func (lc *liveConn) renameTimeout() time.Duration {
	if lc.readTimeout > 0 {
		return lc.readTimeout
	}
	return time.Second
}

// returnRenameTimeout bounds the rename of a connection being given
// back: the caller's Close waits for it. A server that does not answer
// CLIENT SETNAME within it (hung, overloaded) gets the connection closed
// instead, as a failed rename does, and the next caller a fresh one:
// waiting the read timeout there made every Close on a hung server take
// the whole ReadTimeout. A live server answers in far less.
const returnRenameTimeout = 200 * time.Millisecond

// renameOnReturn brings a connection that is being given back to the
// pool up to date; it loops because the name may change again meanwhile.
func (lc *liveConn) renameOnReturn() {
	ctx, cancel := context.WithTimeout(context.Background(), returnRenameTimeout)
	defer cancel()
	for range 3 {
		cur, stale := lc.stale()
		if !stale || lc.failed.Load() || lc.leftState() {
			// A connection left in a state the pool does not undo is
			// closed at its next borrow: renaming it is a round trip
			// for nothing while the caller's Close waits.
			return
		}
		if lc.rename(ctx, cur) != nil {
			return
		}
	}
}
