package shard

import (
	"time"

	"github.com/gomodule/redigo/redis"
)

// Order across a move.
//
// While a channel (or shard channel) moves to another node — a migration,
// a ring shard ejected or restored, a slot resharded — two connections
// carry it for a moment: the old one, whose unsubscribe is on its way, may
// still hold messages published before the move (a busy node, its socket
// full of other channels' messages, or one that stalls a moment), while
// the new one already delivers messages published after it. Delivered as
// they come, a later message of the channel would come before an earlier
// one. So the new connection holds the channel's messages back until the
// old one has let the channel go (its unsubscribe confirmed, the server's
// own unsubscribe push, or the connection lost) — everything the old node
// sent before that has been delivered then — or until holdLimit has
// passed, the time in which a connection that sends nothing is taken for
// dead. That time counts from the old connection's last message, not from
// the start of the hold: a node that is still delivering what it had
// queued before the move (a backlog of other channels' messages, up to the
// server's output buffer limit, 32 MB by default) is alive, and its
// unsubscribe's confirmation comes after that backlog. Counted from the
// start, a hold shorter than the backlog's delivery (29 MB behind a link
// of 8 MB/s take some 4 s, the default limit with a 3 s read timeout)
// released the new node's messages before the old node's, out of order.
// A node that answers but sends no message (busy with a script: it
// refuses the unsubscribe and the health PINGs with BUSY) does not
// prolong it.
//
// The hold waits for the subscriptions the other connections had when it
// began, not for whatever they have later: a channel can come back to the
// old connection before it let the channel go (a ring shard ejected and
// restored at once: its new SUBSCRIBE sent before its confirmation of
// the old UNSUBSCRIBE is read). Each connection's replies come in the
// order of its commands, so the hold counts, for each other connection,
// the ends of the channel it owes: one for the subscription it has (or
// asked for), one for each unsubscribe not answered yet. The channel's
// messages from a later subscription there are held by that connection
// in turn while this one carries the channel.

// heldMsgs are the messages of one name a connection holds back.
type heldMsgs struct {
	msgs  []redis.Message
	until time.Time // a channel's: holdLimit after its start (a pattern's lasts while its moves do)
	// The other connections that carried the name when the hold began,
	// and how many ends of it (see letGo) each still owes.
	owed map[*subConn]int
}

// holdLimit is how long a new connection holds a moving name's messages
// back at least, and after the old connection's last message at most
// (see delivering).
func (s *Subscription) holdLimit() time.Duration { return s.opts.PingInterval + s.opts.PingTimeout }

// carriedElsewhere reports whether a connection other than sc has sn
// subscribed on its node, or may have: sent, or with an unsubscribe not
// answered yet. Caller holds s.mu.
func (s *Subscription) carriedElsewhere(sn subName, sc *subConn) bool {
	for _, o := range s.conns {
		if o == sc {
			continue
		}
		if o.sent[sn] || o.unsubscribing(sn) {
			return true
		}
	}
	return false
}

// owedEnds returns, for each connection other than sc that carries sn
// (see carriedElsewhere), how many times its node has yet to let sn go
// before everything it carries now is over: once for the subscription it
// has or asked for, once for each unsubscribe of sn not answered yet. Nil
// when none carries it. Caller holds s.mu.
func (s *Subscription) owedEnds(sn subName, sc *subConn) map[*subConn]int {
	var owed map[*subConn]int
	for _, o := range s.conns {
		if o == sc {
			continue
		}
		n := o.unsub[sn]
		if o.sent[sn] {
			n++
		}
		if n > 0 {
			if owed == nil {
				owed = map[*subConn]int{}
			}
			owed[o] = n
		}
	}
	return owed
}

// letGo records that o's node let sn go once: an unsubscribe of it
// answered, the server's own unsubscribe, or a subscribe of it refused.
// The holds that wait for it count it. Caller holds s.mu.
func (s *Subscription) letGo(o *subConn, sn subName) {
	if s.holds == 0 {
		return
	}
	for _, sc := range s.conns {
		if sc == o || sc.holding.Load() == 0 {
			continue
		}
		if h := sc.hold[sn]; h != nil && h.owed[o] > 0 {
			h.owed[o]--
		}
	}
}

// owing reports whether a connection h waits for has not let the name go
// as often as it owed yet (one lost or closed since owes nothing: its
// node dropped the name with it). Caller holds s.mu.
func (s *Subscription) owing(h *heldMsgs) bool {
	for o, n := range h.owed {
		if n > 0 && !o.closed && s.conns[o.addr] == o {
			return true
		}
	}
	return false
}

// delivering reports whether a connection h waits for, and that has not
// let the name go yet, read a message less than holdLimit ago: it is
// alive, working through what its node queued before the move, and its
// confirmation is on its way behind that. Caller holds s.mu.
func (s *Subscription) delivering(h *heldMsgs, now time.Time) bool {
	for o, n := range h.owed {
		if n > 0 && !o.closed && s.conns[o.addr] == o && now.Sub(time.Unix(0, o.lastMsg.Load())) < s.holdLimit() {
			return true
		}
	}
	return false
}

// holdIfMoving makes sc hold back the messages of the names it is about
// to subscribe that another connection still carries (see above).
// Patterns are not held: a ring pattern is carried by every shard at
// once. Caller holds s.mu.
func (s *Subscription) holdIfMoving(sc *subConn, names []subName) {
	for _, sn := range names {
		if sn.kind == kindPattern || sc.hold[sn] != nil {
			continue
		}
		owed := s.owedEnds(sn, sc)
		if owed == nil {
			continue
		}
		if sc.hold == nil {
			sc.hold = map[subName]*heldMsgs{}
		}
		sc.hold[sn] = &heldMsgs{until: time.Now().Add(s.holdLimit()), owed: owed}
		sc.holding.Add(1)
		s.holds++
	}
}

// holdMessage keeps m back when sc holds its channel, and reports
// whether it did (or dropped it: held messages count against BufferSize
// like the buffered ones). Called by sc's reader.
func (s *Subscription) holdMessage(sc *subConn, m redis.Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var h *heldMsgs
	if m.Pattern != "" {
		h = s.patternHold(sc, m.Channel)
	} else if h = sc.hold[subName{kindChannel, m.Channel}]; h == nil {
		h = sc.hold[subName{kindShard, m.Channel}]
	}
	if h == nil {
		return false
	}
	if s.q.messages()+int(s.held.Load()) >= s.opts.BufferSize {
		s.st.dropped.Add(1)
		return true
	}
	h.msgs = append(h.msgs, m)
	s.held.Add(1)
	return true
}

// stillMoving reports whether sc must go on holding h, sn's messages:
// another connection has not let go of the channel it carried when the
// hold began (and still carries it), or, for a pattern's messages of
// channel sn.name, an old node's move fence has not come back
// (subscription_patternmove.go). Caller holds s.mu.
func (s *Subscription) stillMoving(sc *subConn, sn subName, h *heldMsgs) bool {
	if sn.kind == kindPattern {
		return s.fenceAwaited(sc, sn.name) // within their limit: see pruneMoves
	}
	return s.owing(h) && s.carriedElsewhere(sn, sc)
}

// releaseHolds delivers, in order, the messages held back for names that
// no other connection carries any more (for a pattern's channel: whose
// old node's move fence came back), or held past holdLimit; all of
// sc's when sc is lost (nil: none). Caller holds s.mu.
func (s *Subscription) releaseHolds(lost *subConn) {
	now := time.Now()
	s.pruneMoves(now)
	if s.holds == 0 {
		return
	}
	release := func(sc *subConn, force bool) {
		for sn, h := range sc.hold {
			s.releaseHold(sc, sn, h, force, now)
		}
		if sc.idle() {
			s.dirty = true // reconcile closes it
			s.poke()
		}
	}
	if lost != nil {
		release(lost, true)
	}
	for _, sc := range s.conns {
		if sc.holding.Load() > 0 {
			release(sc, false)
		}
	}
}

// releaseHoldsOf is releaseHolds for the holds of sn alone: what an
// answer about sn (its unsubscribe confirmed on one node) may end. Called
// for each of the confirmations of a move of many names, releaseHolds
// looked at every hold each time, which made the move quadratic under
// the lock; the other holds end at their limit on the loop's tick.
// Caller holds s.mu.
func (s *Subscription) releaseHoldsOf(sn subName) {
	s.pruneMoves(time.Now())
	if s.holds == 0 {
		return
	}
	now := time.Now()
	for _, sc := range s.conns {
		if sc.holding.Load() == 0 {
			continue
		}
		if h := sc.hold[sn]; h != nil && s.releaseHold(sc, sn, h, false, now) && sc.idle() {
			s.dirty = true // reconcile closes it
			s.poke()
		}
	}
}

// releaseHold delivers h, the messages sc holds back for sn, and ends the
// hold, unless it must go on (see releaseHolds) and force is false. It
// reports whether it ended the hold. Caller holds s.mu.
func (s *Subscription) releaseHold(sc *subConn, sn subName, h *heldMsgs, force bool, now time.Time) bool {
	if !force && (sn.kind == kindPattern || now.Before(h.until) || s.delivering(h, now)) && s.stillMoving(sc, sn, h) {
		return false
	}
	for _, m := range h.msgs {
		if !s.q.push(m) {
			s.st.dropped.Add(1)
		}
	}
	s.held.Add(-int64(len(h.msgs)))
	delete(sc.hold, sn)
	sc.holding.Add(-1)
	s.holds--
	return true
}
