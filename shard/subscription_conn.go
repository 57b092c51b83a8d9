package shard

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
)

// subKind is the kind of a subscribed name.
type subKind uint8

const (
	kindChannel subKind = iota // SUBSCRIBE
	kindPattern                // PSUBSCRIBE
	kindShard                  // SSUBSCRIBE
)

func (k subKind) subCommand() string {
	return [...]string{"SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE"}[k]
}

func (k subKind) unsubCommand() string {
	return [...]string{"UNSUBSCRIBE", "PUNSUBSCRIBE", "SUNSUBSCRIBE"}[k]
}

// push kinds of the confirmations, as the server names them.
func (k subKind) subPush() string { return [...]string{"subscribe", "psubscribe", "ssubscribe"}[k] }
func (k subKind) unsubPush() string {
	return [...]string{"unsubscribe", "punsubscribe", "sunsubscribe"}[k]
}

// kindOfPush maps a confirmation's kind to the name's kind, and says
// whether it confirms a subscribe (or an unsubscribe).
func kindOfPush(kind string) (k subKind, subscribe bool) {
	switch kind {
	case "subscribe":
		return kindChannel, true
	case "psubscribe":
		return kindPattern, true
	case "ssubscribe":
		return kindShard, true
	case "punsubscribe":
		return kindPattern, false
	case "sunsubscribe":
		return kindShard, false
	}
	return kindChannel, false
}

// subName is one subscribed name.
type subName struct {
	kind subKind
	name string
}

// SubscribeError reports names that a server refused to subscribe to (an
// ACL that does not allow the channel, say), or any other error reply in
// subscribe mode. Names refused a subscribe for good are no longer part
// of the subscription; an unsubscribe a server refused is sent again
// later. It also reports a reply a connection cannot have sent (Err wraps
// ErrPubSubReply): the connection is then dialled again and its names
// stay in the subscription.
type SubscribeError struct {
	Node Node
	// Command is SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, UNSUBSCRIBE... or PING;
	// with ErrPubSubReply, the command whose reply was awaited, if any.
	Command string
	Names   []string // the names the command carried
	Err     error    // the server's reply, a redis.Error, or an error wrapping ErrPubSubReply
}

// Error implements error.
func (e *SubscribeError) Error() string {
	names := e.Names
	more := ""
	if len(names) > 4 {
		names, more = names[:4], fmt.Sprintf(" and %d more", len(e.Names)-4)
	}
	return fmt.Sprintf("shardis: node %s: %s %s%s: %s", e.Node.Addr, e.Command, strings.Join(names, " "), more, errtext.Cause(e.Err))
}

// Unwrap returns the server's reply.
func (e *SubscribeError) Unwrap() error { return e.Err }

// healthPing is the payload of the subscription's own PINGs, whose pongs
// the application does not see.
const healthPing = "shardis-health"

// subConn is one connection of a Subscription, to one node, in subscribe
// mode. Everything but lastRead belongs to the Subscription's lock.
type subConn struct {
	s       *Subscription
	addr    string
	conn    redis.Conn
	sent    map[subName]bool // subscribed, or asked for
	pending []pendingCmd     // commands sent whose replies have not all come
	// unsub counts, for each name, the unsubscribes pending that still
	// list it (the names of pending's unsubscribes, indexed): asked for
	// each name of a move, a scan of pending made a move of N names
	// cost N² under the lock (see unsubscribing).
	unsub    map[subName]int
	lastPing time.Time
	closed   bool
	// lostErr is why the connection was lost (lostLocked): nil while it
	// works, or when it was closed on purpose.
	lostErr  error
	lastRead atomic.Int64 // unix nanoseconds of the last reply
	lastMsg  atomic.Int64 // unix nanoseconds of the last message (delivering, fenceBehindMessages)
	epoch    int64        // its node's epoch when it was dialled (leaveMovedNodes)
	// The moving names whose messages it holds back (subscription_hold.go),
	// and their number, which its reader reads without the lock.
	hold    map[subName]*heldMsgs
	holding atomic.Int32
}

// pendingCmd is a command waiting for its replies: one confirmation per
// name, or one pong, or one error reply.
type pendingCmd struct {
	push  string // the kind of its replies: "subscribe", ..., "pong"
	cmd   string
	names []subName // its names; of an unsubscribe, those not confirmed yet
	left  int
	user  bool       // asked for by the application: it sees the replies
	tally unsubTally // of the application's unsubscribe: its confirmations still awaited
	fence bool       // a PING follows it, whose pong ends it (sendFenced); never delivered
	// a PING whose pong says the node's messages before a move were
	// delivered (subscription_patternmove.go); never delivered
	moveFence bool
	// replyBytes: of a subscribe, about the size of its confirmations
	// (see awaitedReplies).
	replyBytes int
	// each: of an unsubscribe, about the size of one of its
	// confirmations (see awaitedUnsubscribes).
	each int
}

// unsubTally counts, for each name of one Unsubscribe call, the
// connections whose answer is still awaited: a name carried by several
// (a ring pattern) is confirmed to the application once, when the last of
// them has answered, so that no message of the name comes after its
// confirmation.
type unsubTally map[subName]int

// done counts one connection's answer for sn, and reports whether it was
// the last one awaited.
func (t unsubTally) done(sn subName) bool {
	n, ok := t[sn]
	if !ok {
		return false
	}
	if n > 1 {
		t[sn] = n - 1
		return false
	}
	delete(t, sn)
	return true
}

func newSubConn(s *Subscription, addr string, conn redis.Conn) *subConn {
	sc := &subConn{s: s, addr: addr, conn: conn, sent: map[subName]bool{}, lastPing: time.Now()}
	sc.lastRead.Store(time.Now().UnixNano())
	return sc
}

// maxNamesPerCommand bounds the names of one SUBSCRIBE command.
const maxNamesPerCommand = 1024

// subscribe sends the (P|S)SUBSCRIBE commands for names, which have one
// kind (and, for shard channels in cluster mode, one slot), and marks them
// sent.
func (sc *subConn) subscribe(names []subName) error {
	for len(names) > 0 {
		n := min(len(names), maxNamesPerCommand)
		if err := sc.send(names[0].kind.subCommand(), names[0].kind.subPush(), names[:n], nil); err != nil {
			return err
		}
		for _, sn := range names[:n] {
			sc.sent[sn] = true
		}
		names = names[n:]
	}
	return sc.conn.Flush()
}

// unsubscribe sends the (P|S)UNSUBSCRIBE commands for names of any kinds;
// with a tally the application sees the confirmations (see unsubTally).
func (sc *subConn) unsubscribe(names []subName, tally unsubTally) error {
	if len(names) == 0 {
		return nil
	}
	byKind := map[subKind][]subName{}
	for _, sn := range names {
		byKind[sn.kind] = append(byKind[sn.kind], sn)
	}
	for k, list := range byKind {
		if k == kindShard && sc.s.c.cl() != nil {
			// One slot per command, or the server says CROSSSLOT.
			bySlot := map[int][]subName{}
			for _, sn := range list {
				slot := cluster.Slot(sn.name)
				bySlot[slot] = append(bySlot[slot], sn)
			}
			for _, group := range bySlot {
				if err := sc.sendFenced(k.unsubCommand(), k.unsubPush(), group, tally); err != nil {
					return err
				}
			}
			continue
		}
		for len(list) > 0 {
			n := min(len(list), maxNamesPerCommand)
			if err := sc.send(k.unsubCommand(), k.unsubPush(), list[:n], tally); err != nil {
				return err
			}
			list = list[n:]
		}
	}
	return sc.conn.Flush()
}

// countUnsub adds d to the pending unsubscribes of each of names (see
// unsub).
func (sc *subConn) countUnsub(names []subName, d int) {
	if sc.unsub == nil {
		sc.unsub = map[subName]int{}
	}
	for _, sn := range names {
		if n := sc.unsub[sn] + d; n > 0 {
			sc.unsub[sn] = n
		} else {
			delete(sc.unsub, sn)
		}
	}
}

// ping sends PING data.
func (sc *subConn) ping(data string, user bool) error {
	sc.lastPing = time.Now()
	if err := sc.conn.Send("PING", data); err != nil {
		return err
	}
	sc.pending = append(sc.pending, pendingCmd{push: "pong", cmd: "PING", left: 1, user: user})
	return sc.conn.Flush()
}

// send queues one command for names and records what it waits for; with
// a tally (an application's unsubscribe, which counted its names in it
// before: see removeLocked) the application sees the confirmations.
func (sc *subConn) send(cmd, push string, names []subName, tally unsubTally) error {
	args := make([]any, len(names))
	for i, sn := range names {
		args[i] = sn.name
	}
	if err := sc.conn.Send(cmd, args...); err != nil {
		return err
	}
	p := pendingCmd{push: push, cmd: cmd, names: names, left: len(names), user: tally != nil, tally: tally}
	if isSubscribePush(push) {
		for _, sn := range names {
			p.replyBytes += confirmationBytes(sn)
		}
	} else {
		sc.countUnsub(names, 1)
		for _, sn := range names {
			p.each += confirmationBytes(sn)
		}
		p.each /= max(1, len(names))
	}
	sc.pending = append(sc.pending, p)
	return nil
}

// maxAwaitedReplies bounds, in bytes, the confirmations a connection's
// subscribe and unsubscribe commands may have outstanding together: the
// names beyond it are sent as earlier ones are confirmed. A server builds
// every confirmation of the commands it reads at once, and closes a
// subscriber whose output buffer passes client-output-buffer-limit pubsub
// (32 MB, or 8 MB for 60 s, by default); this reader, slower than the
// server, let it pass that limit with a few hundred thousand names on one
// node, whose connection was then closed and dialled again, and all its
// names sent again, for good. 4 MB is half the default soft limit. The
// two kinds share it (see roomFor): with an allowance each, a large
// Subscribe and a large Unsubscribe (or a move's) on one connection had
// 8 MB awaited, the soft limit itself.
const maxAwaitedReplies = 4 << 20

// confirmationBytes is about the size of the confirmation of sn
// (*3 $9 subscribe $len name :count, in RESP).
func confirmationBytes(sn subName) int { return len(sn.name) + 40 }

// awaitedReplies returns about the size of the confirmations the
// connection's subscribe commands still await.
func (sc *subConn) awaitedReplies() int {
	n := 0
	for _, p := range sc.pending {
		if p.replyBytes > 0 && len(p.names) > 0 {
			n += p.replyBytes / len(p.names) * p.left
		}
	}
	return n
}

// awaited returns about the size of every confirmation the connection's
// subscribe and unsubscribe commands still await.
func (sc *subConn) awaited() int { return sc.awaitedReplies() + sc.awaitedUnsubscribes() }

// roomFor returns how many bytes more of confirmations of one kind
// (subscribes or unsubscribes) the connection may await, own being
// those of that kind it awaits now: what limit leaves of the
// confirmations of both kinds; and, when it awaits none of that kind, at
// least a quarter of limit, so that neither kind waits for the other's
// to come down (a large Unsubscribe does not hold Subscribes back, nor
// the reverse). What is awaited stays under 5/4 of limit, plus one
// name.
func (sc *subConn) roomFor(limit, own int) int {
	room := limit - sc.awaited()
	if own == 0 {
		room = max(room, limit/4)
	}
	return room
}

// awaitedUnsubscribes returns about the size of the confirmations the
// connection's unsubscribe commands still await.
func (sc *subConn) awaitedUnsubscribes() int {
	n := 0
	for _, p := range sc.pending {
		n += p.each * p.left
	}
	return n
}

// sendFenced queues an SUNSUBSCRIBE of one slot in cluster mode followed
// by a PING, the fence that ends its replies.
//
// A node that loses a slot (Redis 7) sends an sunsubscribe push of its own
// for each channel of the slot, and answers an SUNSUBSCRIBE of that slot
// processed afterwards with a single -MOVED error instead of
// confirmations. The push cannot be told from the confirmation of an
// SUNSUBSCRIBE of the same channel sent before it was read: counted as
// the confirmation, it would leave the MOVED to be taken for the reply to
// the next command. With the fence, whatever comes before the pong
// answers the SUNSUBSCRIBE: pushes for its names, then maybe the MOVED.
func (sc *subConn) sendFenced(cmd, push string, names []subName, tally unsubTally) error {
	if err := sc.send(cmd, push, names, tally); err != nil {
		return err
	}
	// No payload: the SUNSUBSCRIBE may leave the connection out of
	// subscribe mode, where PING's payload comes back as a bare string;
	// without one, the answer is a pong in either mode.
	if err := sc.conn.Send("PING"); err != nil {
		return err
	}
	sc.pending[len(sc.pending)-1].fence = true
	return nil
}

// match counts a confirmation or pong against the oldest pending command
// when it is of that kind (and names sn); it returns that command. A
// fenced command stays pending until its fence's pong (endFence).
func (sc *subConn) match(push string, sn subName) (pendingCmd, bool) {
	if len(sc.pending) == 0 {
		return pendingCmd{}, false
	}
	head := &sc.pending[0]
	if head.push != push {
		return pendingCmd{}, false
	}
	if push != "pong" {
		at := -1
		for i, n := range head.names {
			if n == sn {
				at = i
				break
			}
		}
		if at < 0 {
			return pendingCmd{}, false
		}
		if head.fence {
			// A copy: head.names shares its array with the caller's groups.
			rest := make([]subName, 0, len(head.names)-1)
			head.names = append(append(rest, head.names[:at]...), head.names[at+1:]...)
			sc.countUnsub([]subName{sn}, -1)
			head.left--
			return *head, true
		}
		if !isSubscribePush(push) {
			// An unsubscribe's names not confirmed yet are the ones its
			// node may still carry (unsubscribing, owedEnds).
			// In place, without allocating: only this command's part of
			// the array is written. Confirmed in the order sent, the
			// names go from the front.
			sc.countUnsub([]subName{sn}, -1)
			if at == 0 {
				head.names = head.names[1:]
			} else {
				head.names = slices.Delete(head.names, at, at+1)
			}
		}
	}
	head.left--
	cmd := *head
	if head.left <= 0 {
		sc.pending = sc.pending[1:]
	}
	return cmd, true
}

// close closes the connection; its reader ends. Caller holds s.mu.
func (sc *subConn) close() {
	if !sc.closed {
		sc.closed = true
		sc.conn.Close()
		sc.s.untrack(sc)
		sc.s.roomMade()
	}
}

// idle reports whether the connection carries nothing, waits for nothing
// and holds no message back.
func (sc *subConn) idle() bool { return len(sc.sent) == 0 && len(sc.pending) == 0 && len(sc.hold) == 0 }

// read delivers what the connection receives until it fails or is closed.
//
// A goroutine of its own receives the replies (receive); read handles
// them in order. The confirmations need the lock: read takes it once for
// the confirmations and errors that are waiting, up to readBatch of them,
// instead of once for each. A move or an Unsubscribe of many names left
// the reader one confirmation per release of the lock by the placement
// pass, which releases it every passChunk names.
func (sc *subConn) read() {
	s := sc.s
	defer s.wg.Done()
	in := make(chan received, readBatch)
	quit := make(chan struct{})
	defer close(quit)
	s.wg.Add(1)
	go sc.receive(in, quit)
	locked := false
	unlock := func() {
		if locked {
			s.mu.Unlock()
			locked = false
		}
	}
	defer unlock()
	batch := 0
	for {
		var r received
		if locked && batch < readBatch {
			select {
			case r = <-in:
			default:
				unlock()
				r = <-in
			}
		} else {
			unlock()
			r = <-in
		}
		if r.err != nil {
			var re redis.Error
			if errors.As(r.err, &re) {
				if !locked {
					s.mu.Lock()
					locked, batch = true, 0
				}
				batch++
				s.onError(sc, re)
				continue
			}
			unlock()
			s.lost(sc, r.err)
			return
		}
		v, err := parsePush(r.reply)
		if err != nil {
			unlock()
			if s.barePong(sc, r.reply) {
				continue
			}
			// The stream cannot be trusted any more: start afresh.
			s.q.push(s.badReply(sc, err))
			s.lost(sc, err)
			return
		}
		if m, ok := v.(redis.Message); ok {
			unlock() // holdMessage takes the lock
			sc.lastMsg.Store(r.at)
			s.st.received.Add(1)
			if (sc.holding.Load() > 0 || m.Pattern != "" && s.mayHoldPattern(sc)) && s.holdMessage(sc, m) {
				continue
			}
			if !s.q.push(v) { // v, not the message: boxing it again would allocate
				s.st.dropped.Add(1)
			}
			continue
		}
		if !locked {
			s.mu.Lock()
			locked, batch = true, 0
		}
		batch++
		s.onControl(sc, v)
	}
}

// readBatch bounds the replies read handles under one taking of the lock
// (and those receive reads ahead).
const readBatch = 256

// received is a reply, or the error of a receive, and when it came.
type received struct {
	reply any
	err   error
	at    int64 // unix nanoseconds
}

// receive reads the connection's replies for read until a receive fails
// (an error reply does not end it) or read returns (quit is closed).
func (sc *subConn) receive(in chan<- received, quit <-chan struct{}) {
	defer sc.s.wg.Done()
	timeout := sc.s.opts.PingInterval + sc.s.opts.PingTimeout
	for {
		reply, err := redis.ReceiveWithTimeout(sc.conn, timeout)
		now := time.Now().UnixNano()
		var re redis.Error
		if err == nil || errors.As(err, &re) {
			sc.lastRead.Store(now)
		}
		select {
		case in <- received{reply, err, now}:
		case <-quit:
			return
		}
		if err != nil && !errors.As(err, &re) {
			return
		}
	}
}

// badReply returns the error Receive delivers for a reply sc cannot have
// sent: it names the command whose reply was awaited, if any, and its
// names, which stay in the subscription.
func (s *Subscription) badReply(sc *subConn, err error) *SubscribeError {
	s.mu.Lock()
	defer s.mu.Unlock()
	serr := &SubscribeError{Node: s.node(sc.addr), Err: err}
	if len(sc.pending) > 0 {
		head := sc.pending[0]
		serr.Command = head.cmd
		for _, sn := range head.names {
			serr.Names = append(serr.Names, sn.name)
		}
	}
	return serr
}

// barePong handles a bulk string that answers a PING sent when the server
// had left subscribe mode (the last name of the connection unsubscribed,
// or none subscribed yet): outside subscribe mode a server answers
// PING data with data alone. It reports false, leaving the reply to be
// taken for a broken stream, unless the oldest pending command is a PING.
func (s *Subscription) barePong(sc *subConn, reply any) bool {
	data, ok := reply.([]byte)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(sc.pending) == 0 || sc.pending[0].push != "pong" || sc.pending[0].fence {
		return false
	}
	s.onControl(sc, redis.Pong{Data: string(data)})
	return true
}

// unsubMethod is the Subscription method that removes names of kind k.
func (k subKind) unsubMethod() string {
	return [...]string{"Unsubscribe", "PUnsubscribe", "SUnsubscribe"}[k]
}
