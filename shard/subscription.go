package shard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
)

// ErrSubscriptionClosed is returned by the calls on a closed Subscription.
var ErrSubscriptionClosed = errors.New("shardis: subscription closed")

// Subscription is a set of pub/sub subscriptions (channels, patterns and
// shard channels) over the whole deployment, delivered as the values of
// redigo's PubSubConn: redis.Message, redis.Subscription and redis.Pong.
//
// It owns its connections (one per node in use, never pooled) and places
// every name with the client's router:
//
//   - ring mode: a channel or shard channel on the shard its name hashes to
//     (where PUBLISH and SPUBLISH through the client go); a pattern on every
//     shard, the streams merged;
//   - cluster mode: a shard channel on the master of its slot; channels and
//     patterns on one node, a master when chosen, kept when a manual
//     failover demotes it (the cluster broadcasts PUBLISH to every node).
//
// It follows the deployment on its own: a lost connection is dialled again
// with backoff and its names subscribed again, a node that stops answering
// is detected by health PINGs, shard channels follow their slot on MOVED,
// on the server's sunsubscribe after a slot migration and on failover.
// Delivery is at most once: messages published while a name is being
// moved are lost (docs/pubsub.md has the measured gaps). The messages of
// one channel come in publishing order, across a move too: the new
// connection holds them back until the old one has let the channel go,
// for at most PingInterval+PingTimeout; a ring pattern's messages of a
// moving channel likewise, until the old shard has delivered what it
// sent before the move (keyspace events excepted; see docs/pubsub.md).
//
// A Subscription is safe for concurrent use. Read it with Receive or with
// Channel, not both. Close it when done.
type Subscription struct {
	c          *Client
	opts       SubscriptionOptions
	everywhere bool   // patterns go to every node (keyspace events)
	setup      []any  // a command sent on each new connection first (CONFIG SET ...), or nil
	stopWatch  func() // removes the topology watcher

	mu      subLock // see subLock: a call stops waiting for it when its ctx ends
	closed  bool
	want    map[subName]*wantState // what the application asked for
	conns   map[string]*subConn    // by node address
	dialing map[string]bool        // dials in flight
	retry   map[string]*redial     // nodes whose last attempt failed
	home    string                 // cluster mode: the master for channels and patterns
	dirty   bool                   // the placement must be looked at again
	// throttled: names wait to be sent until the confirmations a
	// connection awaits come down (maxAwaitedReplies).
	throttled  bool
	awaitLimit int // maxAwaitedReplies
	// room is closed, and forgotten, when a connection's reader has
	// handled replies or a connection was lost or closed: an
	// Unsubscribe waiting for room among the confirmations awaited
	// (waitUnsubRoom) looks again then. Nil while nobody waits.
	room chan struct{}
	// MOVED replies the loop writes into the slot tables, with mu
	// released (writeRedirects).
	redirects []subRedirect

	// The open connections again, under a lock of their own: Close closes
	// them before it takes mu, which a write to a node that does not read
	// may hold until the write's deadline. closing is set then.
	netMu   sync.Mutex
	nets    map[*subConn]struct{}
	closing atomic.Bool

	kick   chan struct{}
	done   chan struct{}
	ctx    context.Context // ends on Close; bounds dials
	cancel context.CancelFunc
	wg     sync.WaitGroup

	q     queue
	held  atomic.Int64 // messages held back by the connections (subscription_hold.go)
	holds int          // names whose messages a connection holds back
	// Pattern messages across a move (subscription_patternmove.go): the
	// placement the subscription saw last, the moves whose fences are
	// awaited, and their number for the readers.
	seen    atomic.Pointer[placement]
	moves   []*patternMove
	moving  atomic.Int64
	pumping sync.Once
	out     chan redis.Message

	st subCounters
}

type subCounters struct {
	received, delivered, dropped          atomic.Int64
	dials, dialErrors, lost, resubscribed atomic.Int64
	moved, serverErrors                   atomic.Int64
	// Copies of len(want) by kind and of len(conns), kept under mu, for
	// Stats, which must not wait for mu (a write to a node that does
	// not read holds it until the write's deadline).
	names [3]atomic.Int64
	conns atomic.Int64
}

// addWant records ws as wanted for sn. Caller holds s.mu.
func (s *Subscription) addWant(sn subName, ws *wantState) {
	if _, ok := s.want[sn]; !ok {
		s.st.names[sn.kind].Add(1)
	}
	s.want[sn] = ws
}

// dropWant forgets sn. Caller holds s.mu.
func (s *Subscription) dropWant(sn subName) {
	if _, ok := s.want[sn]; ok {
		s.st.names[sn.kind].Add(-1)
		delete(s.want, sn)
	}
}

// setConn records sc as the connection to addr, or forgets addr's when
// sc is nil. Caller holds s.mu.
func (s *Subscription) setConn(addr string, sc *subConn) {
	if sc == nil {
		delete(s.conns, addr)
	} else {
		s.conns[addr] = sc
	}
	s.st.conns.Store(int64(len(s.conns)))
}

// wantState is one name the application subscribed to.
type wantState struct {
	announced bool            // its redis.Subscription was delivered
	on        map[string]bool // the nodes that confirmed it
	waiters   []*waiter       // Subscribe calls waiting for its confirmation
	// holdUntil: a MOVED that named no address ("?"), or one that sent
	// it back to a node that had just sent it away, refused it; it is
	// sent again from then on, once the refresh it asked for is in.
	holdUntil time.Time
	// movedFrom, movedAt: the node that last answered it with a MOVED
	// naming an address, and when (see pacedMoved).
	movedFrom string
	movedAt   time.Time
	// had: for a name carried by several nodes (see spread), every node
	// that ever confirmed it: one that confirms it again counts as a
	// re-subscription, a node that joins does not.
	had map[string]bool
}

// waiter is one Subscribe call waiting for its names.
type waiter struct {
	left  int
	errs  []error
	done  chan struct{}
	names []subName // in whose waiters it is (abandon)
}

// settle answers one of w's names, with err when it failed. An error
// already recorded is not recorded again: one failure (a lost connection,
// a refused command) answers every name it concerns with the same error,
// and a Subscribe of many names returned it once per name (3,000
// identical lines for 3,000 names) instead of once per node.
func (w *waiter) settle(err error) {
	if err != nil && !slices.ContainsFunc(w.errs, func(e error) bool { return sameError(e, err) }) {
		w.errs = append(w.errs, err)
	}
	w.left--
	if w.left == 0 {
		close(w.done)
	}
}

// sameError reports whether a and b are the same error value; an error
// of a type that cannot be compared is the same only as itself, which
// cannot be told: false.
func sameError(a, b error) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Comparable() && a == b
}

// redial is the backoff of a node whose last attempt failed.
type redial struct {
	delay   time.Duration
	next    time.Time
	err     error
	sawDown bool // the client's health checks marked the node down since
}

// NewSubscription returns an empty subscription; add names with
// Subscribe, PSubscribe and SSubscribe.
func (c *Client) NewSubscription(opts SubscriptionOptions) (*Subscription, error) {
	return c.newSubscription(opts, false, nil)
}

func (c *Client) newSubscription(opts SubscriptionOptions, everywhere bool, setup []any) (*Subscription, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	s := &Subscription{
		c: c, opts: opts.withDefaults(c), everywhere: everywhere, setup: setup,
		want: map[subName]*wantState{}, conns: map[string]*subConn{},
		dialing: map[string]bool{}, retry: map[string]*redial{}, nets: map[*subConn]struct{}{},
		kick: make(chan struct{}, 1), done: make(chan struct{}),
		mu: newSubLock(), awaitLimit: maxAwaitedReplies,
	}
	s.q.init(s.opts.BufferSize)
	if s.followsPatternMoves() {
		p := c.currentPlacement()
		s.seen.Store(&p)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	kick := func() { s.poke() }
	switch {
	case c.topo.Load() == nil: // a cluster client from New
		// Its slot table, and the end of a migration (keyspace
		// subscriptions leave the old topology's nodes then).
		stopCluster, stopTopo := c.cl().watch.add(kick), c.subs.topo.add(kick)
		stopOld := func() {}
		if m := c.mig.Load(); m != nil {
			// And the table of the cluster a Config.Migration moves
			// away from, where names are placed meanwhile (keyspace
			// patterns; the others while it waits). Its changes (a
			// MOVED a command met there, a read after its failover)
			// went unseen by a placement that was complete: the names
			// stayed on a master that had left, until the client's own
			// table changed.
			if old, ok := m.from.(*ClusterRouter); ok && old != c.cl() {
				stopOld = old.watch.add(kick)
			}
		}
		s.stopWatch = func() { stopCluster(); stopTopo(); stopOld() }
	case c.ring != nil:
		// Ejections and restores, and switches to another topology.
		stopRing, stopTopo := c.ring.watch.add(kick), c.subs.topo.add(kick)
		s.stopWatch = func() { stopRing(); stopTopo() }
	default: // the user's own Router
		s.stopWatch = c.subs.topo.add(kick)
	}
	s.wg.Add(1)
	go s.loop()
	// Registered last: from here on the client's Close may close s at
	// any moment, and Close needs the watcher and the loop in place.
	if !c.subs.register(s) {
		s.Close()
		return nil, ErrClosed
	}
	return s, nil
}

// Subscribe returns a subscription to channels (SUBSCRIBE), once every
// node involved has confirmed them or ctx ends. On error nothing stays
// subscribed. See Subscription.Subscribe.
func (c *Client) Subscribe(ctx context.Context, channels ...string) (*Subscription, error) {
	return c.subscribeNew(ctx, kindChannel, channels)
}

// PSubscribe returns a subscription to patterns (PSUBSCRIBE). In ring
// mode each pattern is subscribed on every shard, since a channel that
// matches it can live on any of them.
func (c *Client) PSubscribe(ctx context.Context, patterns ...string) (*Subscription, error) {
	return c.subscribeNew(ctx, kindPattern, patterns)
}

// SSubscribe returns a subscription to shard channels (SSUBSCRIBE),
// grouped by the node that owns them, one connection per node.
func (c *Client) SSubscribe(ctx context.Context, channels ...string) (*Subscription, error) {
	return c.subscribeNew(ctx, kindShard, channels)
}

func (c *Client) subscribeNew(ctx context.Context, k subKind, names []string) (*Subscription, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	s, err := c.NewSubscription(SubscriptionOptions{})
	if err != nil {
		return nil, err
	}
	if err := s.add(ctx, k, names); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Subscribe adds channels (SUBSCRIBE) and waits until every node involved
// has confirmed them, or until an attempt to reach one failed, or ctx
// ends. Each new name delivers one redis.Subscription (Count is the number
// of names in the whole subscription). Names whose node could not be
// reached or answered that it cannot serve for now (BUSY, LOADING,
// CLUSTERDOWN...: a *NodeError), and names still waiting when ctx ends,
// stay in the subscription and are subscribed as soon as their node
// answers; so do names no node can carry now (every ring shard ejected,
// no cluster master to turn to: an error wrapping ErrNoNodes, at once,
// and a *NodeError for each shard or master that is down, which matches
// ErrNodeDown when health checks marked it down, and its cause).
// Names a server refused (an ACL, say) are dropped. The error lists them.
func (s *Subscription) Subscribe(ctx context.Context, channels ...string) error {
	return s.add(ctx, kindChannel, channels)
}

// PSubscribe adds patterns (PSUBSCRIBE); see Subscribe.
func (s *Subscription) PSubscribe(ctx context.Context, patterns ...string) error {
	return s.add(ctx, kindPattern, patterns)
}

// SSubscribe adds shard channels (SSUBSCRIBE); see Subscribe.
func (s *Subscription) SSubscribe(ctx context.Context, channels ...string) error {
	return s.add(ctx, kindShard, channels)
}

// Unsubscribe removes channels, or every channel when none is named. Each
// name delivers a redis.Subscription of kind "unsubscribe" once every node
// that carried it confirms (or its connection is lost): no message of the
// name follows it. A name no connection carries (its node is down, or it
// was never subscribed) is confirmed at once; with no name given and none
// to remove, one confirmation with no name is delivered, as a server
// does. Messages already received stay in the buffer. A
// connection found broken gives a *NodeError: the names are removed all
// the same (the server dropped them with the connection), and their
// confirmation may not come. The error says how many of the nodes the
// call was sent to failed, one node a line when several did
// ("shardis: Unsubscribe: 2 of 3 nodes failed:"); its Unwrap() []error
// returns their *NodeErrors. Of many names, the unsubscribes are sent
// as the node confirms earlier ones; when ctx ends meanwhile, Unsubscribe
// returns an error wrapping ctx's error: the names are removed all the
// same, those not sent yet are unsubscribed in the background, and their
// confirmations do not come. So are they when the node answers none of
// the unsubscribes written for the pool's WriteTimeout (stopped, hung):
// that node's *NodeError then matches os.ErrDeadlineExceeded.
func (s *Subscription) Unsubscribe(ctx context.Context, channels ...string) error {
	return s.remove(ctx, kindChannel, channels)
}

// PUnsubscribe removes patterns, or every pattern when none is named.
func (s *Subscription) PUnsubscribe(ctx context.Context, patterns ...string) error {
	return s.remove(ctx, kindPattern, patterns)
}

// SUnsubscribe removes shard channels, or every one when none is named.
func (s *Subscription) SUnsubscribe(ctx context.Context, channels ...string) error {
	return s.remove(ctx, kindShard, channels)
}

func (s *Subscription) add(ctx context.Context, k subKind, names []string) error {
	if err := checkContext(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return errtext.Errorf("shardis: subscribe: %w", err)
	}
	if len(names) == 0 {
		return fmt.Errorf("%w: %s needs at least one name", ErrBadCommand, k.subCommand())
	}
	if err := s.mu.LockContext(ctx); err != nil {
		return errtext.Errorf("shardis: subscribe: %w while the subscription was busy (writing to a node that does not read); nothing was added", err)
	}
	w, err := s.addLocked(k, names)
	done := err == nil && w.left == 0
	s.mu.Unlock()
	if err != nil || done {
		return err
	}
	s.poke()
	return s.await(ctx, w)
}

// await waits for w's names to be confirmed.
func (s *Subscription) await(ctx context.Context, w *waiter) error {
	select {
	case <-w.done:
	case <-ctx.Done():
		if !s.abandon(w) {
			return fmt.Errorf("shardis: subscribe: %w (the names stay subscribed and are retried)", ctx.Err())
		}
		// Every name was answered by then: that answer, not ctx's end.
	case <-s.done:
		return ErrSubscriptionClosed
	}
	// w.done is closed: nothing writes w.errs any more.
	// One error per refusing or failing node, each on a line of its own
	// under one heading (the module's prefix once); Unwrap() []error
	// returns them.
	return errtext.Join("shardis: subscribe", w.errs...)
}

// abandon removes w, whose caller stopped waiting, from the waiters of
// its names: a caller that retries with short timeouts while a node does
// not answer would otherwise pile them up for as long as it does not. It
// reports true, doing nothing, when every name of w was answered already.
// It does not wait for the lock, which a write to a node that does not
// read may hold until the write's deadline: w is then removed later.
func (s *Subscription) abandon(w *waiter) bool {
	if !s.mu.TryLock() {
		go func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.unwait(w)
		}()
		return false
	}
	defer s.mu.Unlock()
	if w.left == 0 {
		return true
	}
	s.unwait(w)
	return false
}

// unwait removes w from the waiters of its names. Caller holds s.mu.
func (s *Subscription) unwait(w *waiter) {
	for _, sn := range w.names {
		if ws := s.want[sn]; ws != nil {
			ws.waiters = slices.DeleteFunc(ws.waiters, func(o *waiter) bool { return o == w })
		}
	}
}

// addLocked adds names to what the subscription wants and returns the
// waiter for their confirmations (none left when all were confirmed
// before and are carried now: a name whose node is down is waited for
// again). Caller holds s.mu.
func (s *Subscription) addLocked(k subKind, names []string) (*waiter, error) {
	if s.closed {
		return nil, ErrSubscriptionClosed
	}
	w := &waiter{done: make(chan struct{})}
	for _, n := range names {
		sn := subName{k, n}
		ws := s.want[sn]
		if ws == nil {
			ws = &wantState{on: map[string]bool{}}
			s.addWant(sn, ws)
			s.reclaimStray(sn)
		}
		if ws.announced && len(ws.on) > 0 && s.confirmedEverywhere(sn, ws) {
			continue // already confirmed, and carried now
		}
		w.left++
		w.names = append(w.names, sn)
		ws.waiters = append(ws.waiters, w)
	}
	s.dirty = true
	return w, nil
}

// reclaimStray forgets sn, wanted again, as sent on the connections
// where it belongs and still is a stray (its unsubscribe left to the
// loop: see leaveUnsubscribes, unsubscribeRefused): counted as sent, it
// would never be subscribed there again and its Subscribe would wait for
// a confirmation that never comes. The loop subscribes it there again
// (the server confirms a name it has already). Elsewhere it stays a
// stray, unsubscribed by the loop. Caller holds s.mu.
func (s *Subscription) reclaimStray(sn subName) {
	var targets []string
	for addr, sc := range s.conns {
		if !sc.sent[sn] {
			continue
		}
		if targets == nil {
			var st *clusterState
			if r := s.c.cl(); r != nil {
				st = r.state.Load()
			}
			targets = s.targets(sn, st, s.home, []string{})
		}
		if slices.Contains(targets, addr) {
			delete(sc.sent, sn)
		}
	}
}

func (s *Subscription) remove(ctx context.Context, k subKind, names []string) error {
	if err := checkContext(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return errtext.Errorf("shardis: unsubscribe: %w", err)
	}
	if err := s.mu.LockContext(ctx); err != nil {
		return errtext.Errorf("shardis: unsubscribe: %w while the subscription was busy (writing to a node that does not read); nothing was removed", err)
	}
	defer s.mu.Unlock()
	return s.removeLocked(ctx, k, names)
}

// removeLocked drops names (every name of kind k when none) and sends
// their unsubscribes. When ctx ends while it waits for room among the
// confirmations awaited (see sendUnsubscribes), the names not sent yet
// are left to the placement loop, which unsubscribes them as strays:
// their confirmations do not come, and the error wraps ctx's. Caller
// holds s.mu.
func (s *Subscription) removeLocked(ctx context.Context, k subKind, names []string) error {
	if s.closed {
		return ErrSubscriptionClosed
	}
	// A move not seen yet: its fences go before the unsubscribes
	// (subscription_patternmove.go).
	s.notePlacement()
	drop := map[subName]bool{}
	if len(names) == 0 {
		for sn := range s.want {
			if sn.kind == k {
				drop[sn] = true
			}
		}
	}
	for _, n := range names {
		drop[subName{k, n}] = true
	}
	for sn := range drop {
		if ws := s.want[sn]; ws != nil {
			for _, w := range ws.waiters {
				w.settle(nil)
			}
			s.dropWant(sn)
		}
	}
	var errs []*NodeError
	sent := 0
	// A name carried by several connections (a ring pattern, keyspace
	// patterns) delivers one confirmation: the last connection's.
	tally := unsubTally{}
	type unsubOf struct {
		sc    *subConn
		names []subName
	}
	var work []unsubOf
	for _, sc := range s.conns {
		var mine []subName
		for sn := range drop {
			// A name whose unsubscribe is still under way there (the
			// node it left, say) may still deliver messages until that
			// is answered: its confirmation comes after them. Looked up
			// in the index of the pending unsubscribes: a scan of them
			// for each name cost the square of their number.
			if sc.sent[sn] || sc.unsubscribing(sn) {
				mine = append(mine, sn)
				delete(sc.sent, sn)
			}
		}
		if len(mine) > 0 {
			sent++
			// Counted for every connection before any is written to:
			// one may answer while another is still being written to
			// (see sendUnsubscribes).
			for _, sn := range mine {
				tally[sn]++
			}
			work = append(work, unsubOf{sc, mine})
		}
	}
	// The names no connection carries are confirmed now; the others as
	// the connections answer.
	s.confirmUncarried(k, names, drop, tally)
	var ctxErr error
	left := 0 // names left to the loop when ctx ended
	for _, u := range work {
		if ctxErr != nil {
			left += s.leaveUnsubscribes(u.sc, u.names, tally)
			continue
		}
		// A connection that broke (the reader handles it) took the
		// names with it on the server.
		n, err := s.sendUnsubscribes(ctx, u.sc, u.names, tally)
		if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) && !s.closed {
			ctxErr, left = err, left+n
			continue
		}
		if err != nil {
			if s.closed {
				return ErrSubscriptionClosed
			}
			errs = append(errs, &NodeError{Node: s.node(u.sc.addr), Err: err})
		}
	}
	if ctxErr != nil {
		s.dirty = true
		s.poke()
		if s.closed || s.closing.Load() {
			return ErrSubscriptionClosed
		}
		return errtext.Errorf("shardis: %s: %w while waiting for the node to confirm earlier unsubscribes; %d names not sent yet are unsubscribed in the background, without confirmation", k.unsubMethod(), ctxErr, left)
	}
	s.dirty = true
	s.poke()
	if len(errs) > 0 && s.closing.Load() {
		return ErrSubscriptionClosed // Close closed the connections under the write
	}
	return s.nodesError(k.unsubMethod(), sent, errs)
}

// sendUnsubscribes sends the application's unsubscribes of names on sc,
// whose confirmations tally counts already, at most passChunk names at
// a time. Before each piece it waits, the lock released, until the
// confirmations sc awaits, of subscribes too, leave room for a quarter
// of the bound, or none of its unsubscribes are awaited, and sends as
// many names as there is room for, one at least (see
// maxAwaitedReplies, roomFor): a
// server builds every confirmation of what it reads at once, and the
// reader, which needs the lock for each, could not read them while the
// whole call held it; with hundreds of thousands of names the server's
// output buffer passed client-output-buffer-limit pubsub and the server
// closed the connection, losing every other name on it. The names of a
// piece not written (sc lost or closed meanwhile, a write failed) are
// gone from the node with the connection: they are confirmed, as
// lostLocked confirms those written. A name sent on sc again meanwhile
// (subscribed again) is left subscribed, and confirmed. When sc is lost
// while it waits, it returns the reason lostLocked was given. When ctx ends
// while it waits, the names not written are left to the loop
// (leaveUnsubscribes): it returns their number and an error wrapping
// ctx's. Caller holds s.mu; after an error, the subscription may have
// been closed meanwhile.
func (s *Subscription) sendUnsubscribes(ctx context.Context, sc *subConn, names []subName, tally unsubTally) (int, error) {
	for len(names) > 0 {
		n := min(len(names), passChunk)
		need := 0
		for _, sn := range names[:n] {
			need += confirmationBytes(sn)
		}
		// Room for a quarter of the bound will do: pieces no smaller,
		// unless the names left are fewer.
		ok, err := s.waitUnsubRoom(ctx, sc, min(need, s.awaitLimit/4))
		if err != nil {
			left := s.leaveUnsubscribes(sc, names, tally)
			if errors.Is(err, errUnsubStalled) {
				err = errtext.Errorf("%w; %d names not sent yet are unsubscribed in the background, without confirmation", err, left)
			}
			return left, err
		}
		if !ok {
			s.confirmUnsent(tally, names)
			if s.closed {
				return 0, ErrSubscriptionClosed
			}
			// Lost meanwhile: the caller sees why, as when a write
			// fails. Closed as idle (every name it carried gone), there
			// is nothing to report.
			return 0, sc.lostErr
		}
		// As many as there is room for beside the confirmations
		// awaited, of subscribes too (one at least). With none awaited
		// too: the whole piece, sent then, of long names (4,096 of 4 KB)
		// had the server build 16 MB of confirmations while the reader
		// waited for the lock, and the server closed the connection at
		// its pubsub output limit, losing every other name on it.
		room := sc.roomFor(s.awaitLimit, sc.awaitedUnsubscribes())
		for i, sn := range names[:n] {
			if room -= confirmationBytes(sn); room < 0 && i > 0 {
				n = i
				break
			}
		}
		piece := slices.DeleteFunc(slices.Clone(names[:n]), func(sn subName) bool {
			if sc.sent[sn] {
				s.confirmUnsent(tally, []subName{sn})
				return true
			}
			return false
		})
		names = names[n:]
		if err := sc.unsubscribe(piece, tally); err != nil {
			// The commands written before the failure are pending:
			// lostLocked confirms their names. Those after it were not
			// written.
			s.confirmUnsent(tally, unwritten(sc, piece))
			s.confirmUnsent(tally, names)
			return 0, err
		}
	}
	return 0, nil
}

// leaveUnsubscribes leaves the application's unsubscribes of names on
// sc, not written, to the placement loop: each name still on sc's node
// and not wanted there again is marked sent there, a stray the loop
// unsubscribes (unsubscribeChunked). Their confirmations do not come:
// tally forgets them, so that another connection's confirmation of a
// name (a ring pattern) does not announce it either while this node may
// still deliver its messages. It returns how many names it left. Caller
// holds s.mu.
func (s *Subscription) leaveUnsubscribes(sc *subConn, names []subName, tally unsubTally) int {
	var st *clusterState
	if r := s.c.cl(); r != nil {
		st = r.state.Load()
	}
	for _, sn := range names {
		delete(tally, sn)
		if sc.closed || s.conns[sc.addr] != sc || sc.sent[sn] {
			continue // gone with the connection, or subscribed there again
		}
		if s.want[sn] != nil && slices.Contains(s.targets(sn, st, s.home, nil), sc.addr) {
			continue // wanted there again: the loop subscribes it
		}
		sc.sent[sn] = true
	}
	return len(names)
}

// unwritten returns the names of piece that no pending command of sc
// lists: those an unsubscribe that failed did not write. Caller holds
// s.mu.
func unwritten(sc *subConn, piece []subName) []subName {
	return slices.DeleteFunc(slices.Clone(piece), func(sn subName) bool { return sc.unsubscribing(sn) })
}

// confirmUnsent counts, for each of names, the answer of a connection
// that will not send it, and delivers the confirmation when it was the
// last one tally awaited. Caller holds s.mu.
func (s *Subscription) confirmUnsent(tally unsubTally, names []subName) {
	for _, sn := range names {
		if tally.done(sn) {
			s.releasePattern(sn)
			s.q.push(redis.Subscription{Kind: sn.kind.unsubPush(), Channel: sn.name, Count: len(s.want)})
		}
	}
}

// waitUnsubRoom waits, the lock released, until the confirmations sc
// awaits leave room for need bytes more of unsubscribe confirmations (see
// roomFor), or none of those are awaited. It reports false when sc or the subscription was closed or
// sc replaced meanwhile, and ctx's error when ctx ends first.
// When sc reads no reply for the pool's WriteTimeout meanwhile, it
// returns an error wrapping errUnsubStalled and os.ErrDeadlineExceeded:
// its node does not read (stopped, hung), as a write that could not be
// made would have shown, and the caller stops waiting for it.
// It looks again each time a reader has handled replies or a connection
// was lost or closed (room), not at a fixed period. Caller holds s.mu.
func (s *Subscription) waitUnsubRoom(ctx context.Context, sc *subConn, need int) (bool, error) {
	stallAfter := s.c.pools.Options().WriteTimeout
	if stallAfter <= 0 {
		stallAfter = pool.DefaultWriteTimeout
	}
	start := time.Now()
	for {
		if s.closed || sc.closed || s.conns[sc.addr] != sc {
			return false, nil
		}
		if own := sc.awaitedUnsubscribes(); own == 0 || need <= sc.roomFor(s.awaitLimit, own) {
			return true, nil
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
		// Silent since the wait began, or since its last reply.
		since := start
		if last := time.Unix(0, sc.lastRead.Load()); last.After(since) {
			since = last
		}
		silent := time.Since(since)
		if silent >= stallAfter {
			return false, errtext.Errorf("%w: no reply for %v while %d bytes of confirmations were awaited: %w",
				errUnsubStalled, silent.Round(time.Millisecond), sc.awaited(), os.ErrDeadlineExceeded)
		}
		if s.room == nil {
			s.room = make(chan struct{})
		}
		room := s.room
		s.mu.Unlock()
		stall := time.NewTimer(stallAfter - silent)
		select {
		case <-room:
		case <-ctx.Done():
		case <-s.done:
		case <-stall.C:
		}
		stall.Stop()
		s.mu.Lock()
		// Silent for long under a big call, a connection would be taken
		// for lost (see pause).
		s.pingIdle()
	}
}

// errUnsubStalled is the cause of an Unsubscribe that stopped waiting
// for room on a connection whose node read nothing (see waitUnsubRoom).
var errUnsubStalled = errors.New("shardis: the node does not answer the unsubscribes written")

// roomMade wakes the calls waiting in waitUnsubRoom. Caller holds s.mu.
func (s *Subscription) roomMade() {
	if s.room != nil {
		close(s.room)
		s.room = nil
	}
}

// nodesError is the error of the call method, sent on sent connections,
// that failed on the nodes of errs: nil when errs is empty; otherwise
// errs in the order of the client's nodes (Unwrap() []error returns
// them), under a heading that names the call and says how many nodes
// failed, one node a line ("shardis: Ping: 2 of 3 nodes failed:"), or
// on the heading's line when one did.
func (s *Subscription) nodesError(method string, sent int, errs []*NodeError) error {
	if len(errs) == 0 {
		return nil
	}
	order := func(ne *NodeError) int {
		if i, ok := s.c.nodes.lookup(ne.Node.Addr); ok {
			return i
		}
		return math.MaxInt
	}
	slices.SortStableFunc(errs, func(a, b *NodeError) int {
		if c := cmp.Compare(order(a), order(b)); c != 0 {
			return c
		}
		return strings.Compare(a.Node.Addr, b.Node.Addr)
	})
	list := make([]error, len(errs))
	for i, ne := range errs {
		list[i] = ne
	}
	return errtext.Join(fmt.Sprintf("shardis: %s: %d of %d nodes failed", method, len(errs), max(sent, len(errs))), list...)
}

// confirmUncarried delivers at once the confirmation of each dropped
// name that no connection was asked to unsubscribe (tally has none of
// it): its node is down, or it was never subscribed. A server confirms
// every name of an UNSUBSCRIBE, and an application may wait for the
// confirmations. With no name given and none of kind k to drop, it
// delivers one with no name, as a server does. Caller holds s.mu.
func (s *Subscription) confirmUncarried(k subKind, names []string, drop map[subName]bool, tally unsubTally) {
	if len(drop) == 0 {
		s.q.push(redis.Subscription{Kind: k.unsubPush(), Count: len(s.want)})
		return
	}
	if len(names) == 0 {
		for sn := range drop {
			names = append(names, sn.name)
		}
		slices.Sort(names)
	}
	for _, n := range names {
		sn := subName{k, n}
		if !drop[sn] {
			continue // named twice: confirmed once
		}
		delete(drop, sn)
		if _, awaited := tally[sn]; !awaited {
			s.q.push(redis.Subscription{Kind: k.unsubPush(), Channel: n, Count: len(s.want)})
		}
	}
}

// Ping sends PING with data on every connection of the subscription; each
// answers with a redis.Pong. With no connection open (no names, or every
// node they need is down) nothing would answer: it returns an error
// wrapping ErrNoNodes; a connection found broken gives a *NodeError (it
// is dialled again, and sends no pong), under a heading that says how
// many of the connections failed, as Unsubscribe's.
func (s *Subscription) Ping(ctx context.Context, data string) error {
	if err := checkContext(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return errtext.Errorf("shardis: ping: %w", err)
	}
	if err := s.mu.LockContext(ctx); err != nil {
		return errtext.Errorf("shardis: ping: %w while the subscription was busy (writing to a node that does not read)", err)
	}
	defer s.mu.Unlock()
	return s.pingLocked(data)
}

// pingLocked is Ping; caller holds s.mu.
func (s *Subscription) pingLocked(data string) error {
	if s.closed {
		return ErrSubscriptionClosed
	}
	if len(s.conns) == 0 {
		return errtext.Errorf("shardis: ping: %w: the subscription has no connection open", ErrNoNodes)
	}
	var errs []*NodeError
	for _, sc := range s.conns {
		if err := sc.ping(data, true); err != nil {
			errs = append(errs, &NodeError{Node: s.node(sc.addr), Err: err})
		}
	}
	if len(errs) > 0 && s.closing.Load() {
		return ErrSubscriptionClosed // Close closed the connections under the write
	}
	return s.nodesError("Ping", len(s.conns), errs)
}

// Receive returns the next redis.Message, redis.Subscription or redis.Pong,
// waiting until one arrives or ctx ends. A server's refusal of a name
// comes back as a *SubscribeError; Receive can be called again after it.
// After Close it returns ErrSubscriptionClosed: Close discards what was
// buffered.
func (s *Subscription) Receive(ctx context.Context) (any, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	for {
		if v, ok := s.q.pop(); ok {
			if err, isErr := v.(error); isErr {
				return nil, err
			}
			if _, isMsg := v.(redis.Message); isMsg {
				s.st.delivered.Add(1)
			}
			return v, nil
		}
		select {
		case <-s.q.ready:
		case <-s.done:
			return nil, ErrSubscriptionClosed
		case <-ctx.Done():
			return nil, fmt.Errorf("shardis: receive: %w", ctx.Err())
		}
	}
}

// Channel returns a channel that delivers the subscription's messages
// only (no confirmations, pongs or errors), closed by Close. The first call
// starts a goroutine that feeds it; use either Channel or Receive.
func (s *Subscription) Channel() <-chan redis.Message {
	s.pumping.Do(func() {
		s.out = make(chan redis.Message)
		// Under netMu: Close, once it has set closing, waits for the
		// goroutines, and no new one may join them then. Not under mu,
		// which a write to a node that does not read may hold until
		// the write's deadline.
		s.netMu.Lock()
		defer s.netMu.Unlock()
		if s.closing.Load() {
			close(s.out)
			return
		}
		s.wg.Add(1)
		go s.pump()
	})
	return s.out
}

func (s *Subscription) pump() {
	defer s.wg.Done()
	defer close(s.out)
	for {
		v, err := s.Receive(s.ctx)
		if err != nil {
			if errors.Is(err, ErrSubscriptionClosed) || s.ctx.Err() != nil {
				return
			}
			continue
		}
		if m, ok := v.(redis.Message); ok {
			select {
			case s.out <- m:
			case <-s.done:
				return
			}
		}
	}
}

// Close closes the subscription's connections (which ends their
// subscriptions on the servers), stops its goroutines and discards the
// buffered messages. It is idempotent. Close subscriptions before their
// Client: a subscription whose client is closed can no longer dial.
func (s *Subscription) Close() error {
	// First the connections, without mu: a write in progress under mu
	// (to a node that does not read, its socket buffers full) ends now,
	// not at its deadline.
	s.netMu.Lock()
	s.closing.Store(true)
	for sc := range s.nets {
		sc.conn.Close()
	}
	s.nets = nil
	s.netMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for _, sc := range s.conns {
		sc.close()
	}
	s.conns = nil
	s.st.conns.Store(0)
	for _, ws := range s.want {
		for _, w := range ws.waiters {
			if w.left > 0 {
				w.left = 1
				w.settle(ErrSubscriptionClosed)
			}
		}
		ws.waiters = nil
	}
	s.mu.Unlock()
	s.c.subs.unregister(s)
	s.stopWatch()
	s.cancel()
	close(s.done)
	s.wg.Wait()
	s.q.clear()
	s.held.Store(0) // what the closed connections held back is gone too
	return nil
}

// track records sc as open for Close; it reports false, when Close has
// begun, and sc must then be closed. Caller holds s.mu.
func (s *Subscription) track(sc *subConn) bool {
	s.netMu.Lock()
	defer s.netMu.Unlock()
	if s.closing.Load() {
		return false
	}
	s.nets[sc] = struct{}{}
	return true
}

// untrack forgets sc, closed. Caller holds s.mu.
func (s *Subscription) untrack(sc *subConn) {
	s.netMu.Lock()
	delete(s.nets, sc)
	s.netMu.Unlock()
}

// poke asks the placement loop to look again; it never blocks.
func (s *Subscription) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// backoff records a failed attempt on addr and returns the redial state.
// Caller holds s.mu.
func (s *Subscription) backoff(addr string, err error) {
	r := s.retry[addr]
	if r == nil {
		r = &redial{delay: 25 * time.Millisecond}
		s.retry[addr] = r
	} else {
		r.delay = min(2*r.delay, s.opts.MaxBackoff)
	}
	r.err = err
	jitter := time.Duration(rand.Int64N(int64(r.delay)/5 + 1))
	r.next = time.Now().Add(r.delay - r.delay/10 + jitter)
	if s.home == addr {
		s.home = ""
	}
	// The node may have failed over or left: look at the topology (the
	// old cluster's, for a node of the old cluster of a client built
	// with Config.Migration while it waits: refreshing the client's own
	// left a channel on a dead old master for the rest of the wait).
	s.refreshClusterOf(addr)
}

// refreshTopology asks for a cluster topology refresh (coalesced and rate
// limited by the client); in ring mode it does nothing.
func (s *Subscription) refreshTopology() {
	if s.c.cl() != nil && !s.c.closed.Load() {
		s.c.refresh(context.Background(), false)
	}
}

// subLock is the Subscription's lock: a mutex that a call can stop
// waiting for when its ctx ends. The lock is held while commands are
// written to the subscription's connections, and a write to a node that
// does not read (hung, its socket buffers full) lasts until the write's
// deadline: a call with a shorter ctx must not wait that long.
type subLock struct{ ch chan struct{} }

func newSubLock() subLock { return subLock{ch: make(chan struct{}, 1)} }

// Lock takes the lock.
func (l subLock) Lock() { l.ch <- struct{}{} }

// Unlock releases it.
func (l subLock) Unlock() { <-l.ch }

// TryLock takes the lock if it is free, and reports whether it did.
func (l subLock) TryLock() bool {
	select {
	case l.ch <- struct{}{}:
		return true
	default:
		return false
	}
}

// LockContext takes the lock, or returns ctx's error if ctx ends first.
func (l subLock) LockContext(ctx context.Context) error {
	if l.TryLock() {
		return nil
	}
	select {
	case l.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
