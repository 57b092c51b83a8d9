package shard

import "time"

// Pattern messages across a move (ring and router mode).
//
// A ring pattern is subscribed on every shard, so a channel that moves to
// another shard (a migration switching the client's topology, a shard
// ejected or restored) matches it on both, and no connection lets the
// pattern go: the hold of subscription_hold.go, which waits for the old
// connection's unsubscribe, cannot serve. Instead, when the subscription
// sees the client route by another placement, it sends a PING — the move
// fence — on each connection that carries patterns. A pattern message that
// a connection receives afterwards for a channel the previous placement
// routed to another node whose fence has not come back is held, until
// that fence's pong (everything the old node sent before it has been
// delivered then), the old connection lost, or until the old connection
// has read no message for holdLimit (and at least holdLimit from the
// move): as for a channel's hold (subscription_hold.go), an old node that
// is still working through a backlog queued before the move is alive, and
// its fence's pong comes after that backlog. Counted from the move, a
// hold shorter than the backlog's delivery (29 MB behind a link of 8 MB/s
// take some 4 s; the limit is 2 s with the default PingInterval and a
// 1 s read timeout) released the new node's messages of the channel
// before the old node's.
//
// Keyspace subscriptions are left out: their channels name keys, which
// the router does not place by the channel's name.

// placement is the routing of a ring or router client at one moment.
type placement struct {
	topo *topology
	ring *ringState // topo.router's state, when it is a *RingRouter
}

// currentPlacement returns the routing the client uses now; the zero
// placement for a cluster client.
func (c *Client) currentPlacement() placement {
	t := c.topo.Load()
	if t == nil || t.cl != nil {
		return placement{}
	}
	p := placement{topo: t}
	if rr, ok := t.router.(*RingRouter); ok {
		p.ring = rr.state.Load()
	}
	return p
}

// addr returns the address of the node p routes channel ch to.
func (p placement) addr(ch string) (string, bool) {
	switch {
	case p.topo == nil:
		return "", false
	case p.ring != nil:
		if p.ring.r == nil { // every shard ejected
			return "", false
		}
		return p.topo.router.(*RingRouter).nodes[p.ring.toCfg[p.ring.r.Locate(ch)]].Addr, true
	}
	n, err := p.topo.router.Route(ch)
	if err != nil {
		return "", false
	}
	return n.Addr, true
}

// patternMove is one change of placement whose fences are awaited.
type patternMove struct {
	from    placement
	waiting map[string]*subConn // the connections whose fence has not come back, by address
	until   time.Time           // holdLimit after the move: the least it is waited for
}

// followsPatternMoves reports whether the subscription orders pattern
// messages across moves: ring and router mode, keyspace events excepted.
func (s *Subscription) followsPatternMoves() bool {
	return !s.everywhere && s.c.cl() == nil
}

// mayHoldPattern reports, without the lock, whether a pattern message
// read by sc may have to be held: sc holds some already, a move's fences
// are awaited, or the client routes by another placement than the one
// the subscription saw last. Called by sc's reader.
func (s *Subscription) mayHoldPattern(sc *subConn) bool {
	// The placement seen first, then the moves: notePlacement stores a
	// move before it records its placement as seen, so a reader that
	// finds the placement seen finds its move too.
	if s.followsPatternMoves() {
		if seen := s.seen.Load(); seen == nil || *seen != s.c.currentPlacement() {
			return true
		}
	}
	return sc.holding.Load() > 0 || s.moving.Load() > 0
}

// notePlacement starts a move when the client routes by another
// placement than the one seen last: it sends the fences. Caller holds
// s.mu.
func (s *Subscription) notePlacement() {
	if !s.followsPatternMoves() {
		return
	}
	now := s.c.currentPlacement()
	prev := s.seen.Load()
	if prev != nil && *prev == now {
		return
	}
	// The new placement is recorded as seen last, once the move is in
	// s.moves: a reader that checks without the lock (mayHoldPattern)
	// and finds the placement seen must also find the move, or it would
	// deliver a message that the move's fence holds back.
	defer s.seen.Store(&now)
	if prev == nil || prev.topo == nil {
		return
	}
	mv := &patternMove{from: *prev, waiting: map[string]*subConn{}, until: time.Now().Add(s.holdLimit())}
	for addr, sc := range s.conns {
		if !sc.carriesPattern() {
			continue
		}
		if err := sc.moveFence(); err != nil {
			continue // the reader sees the failure: the connection is lost
		}
		mv.waiting[addr] = sc
	}
	if len(mv.waiting) > 0 {
		s.moves = append(s.moves, mv)
		s.moving.Store(int64(len(s.moves)))
	}
}

// carriesPattern reports whether sc has a pattern subscribed, or asked
// for, or one whose unsubscribe is not answered yet.
func (sc *subConn) carriesPattern() bool {
	for sn := range sc.sent {
		if sn.kind == kindPattern {
			return true
		}
	}
	for _, p := range sc.pending {
		if p.push == "punsubscribe" {
			return true
		}
	}
	return false
}

// moveFence sends the PING whose pong says that sc delivered everything
// its node sent before the move.
func (sc *subConn) moveFence() error {
	if err := sc.conn.Send("PING", healthPing); err != nil {
		return err
	}
	sc.pending = append(sc.pending, pendingCmd{push: "pong", cmd: "PING", left: 1, moveFence: true})
	return sc.conn.Flush()
}

// patternHold returns the hold in which sc keeps pattern messages of
// channel ch back, starting one when a move's previous placement routed
// ch to another node whose fence is awaited; nil when the message can be
// delivered. Caller holds s.mu.
func (s *Subscription) patternHold(sc *subConn, ch string) *heldMsgs {
	s.notePlacement()
	sn := subName{kindPattern, ch}
	if h := sc.hold[sn]; h != nil {
		return h // after the messages held before it
	}
	if !s.fenceAwaited(sc, ch) {
		return nil
	}
	if sc.hold == nil {
		sc.hold = map[subName]*heldMsgs{}
	}
	// No until: the hold lasts while its moves do (pruneMoves).
	h := &heldMsgs{}
	sc.hold[sn] = h
	sc.holding.Add(1)
	s.holds++
	return h
}

// fenceAwaited reports whether a move's previous placement routed
// channel ch to another node than sc's whose fence has not come back.
// Caller holds s.mu.
func (s *Subscription) fenceAwaited(sc *subConn, ch string) bool {
	for _, mv := range s.moves {
		old, ok := mv.from.addr(ch)
		if ok && old != sc.addr && mv.waiting[old] != nil {
			return true
		}
	}
	return false
}

// fenceDone records that sc answered its move fence, or was lost (its
// node's messages before the move were delivered, or never will be).
// Caller holds s.mu.
func (s *Subscription) fenceDone(sc *subConn) {
	for _, mv := range s.moves {
		if mv.waiting[sc.addr] == sc {
			delete(mv.waiting, sc.addr)
		}
	}
	s.pruneMoves(time.Now())
}

// pruneMoves forgets the moves whose fences all came back, or that
// lasted holdLimit and whose awaited connections have read no message
// for as long (see above). Caller holds s.mu.
func (s *Subscription) pruneMoves(now time.Time) {
	if len(s.moves) == 0 {
		return
	}
	kept := s.moves[:0]
	for _, mv := range s.moves {
		if len(mv.waiting) > 0 && (now.Before(mv.until) || s.fenceBehindMessages(mv, now)) {
			kept = append(kept, mv)
		}
	}
	clear(s.moves[len(kept):])
	s.moves = kept
	s.moving.Store(int64(len(s.moves)))
}

// fenceBehindMessages reports whether a connection whose fence mv awaits
// read a message less than holdLimit ago: it is alive, working through
// what its node queued before the move, and its fence's pong is on its
// way behind that. Caller holds s.mu.
func (s *Subscription) fenceBehindMessages(mv *patternMove, now time.Time) bool {
	for addr, sc := range mv.waiting {
		if !sc.closed && s.conns[addr] == sc && now.Sub(time.Unix(0, sc.lastMsg.Load())) < s.holdLimit() {
			return true
		}
	}
	return false
}

// releasePattern delivers the messages the connections hold back for
// pattern sn, whose unsubscribe every connection that carried it has
// answered, before its confirmation: none of its messages may come after
// that, and every node that sent older ones has let it go (a move's fence
// may come after the unsubscribe, when the move was seen after it was
// sent). Caller holds s.mu.
func (s *Subscription) releasePattern(sn subName) {
	if sn.kind != kindPattern || s.holds == 0 {
		return
	}
	for _, sc := range s.conns {
		for key, h := range sc.hold {
			if key.kind != kindPattern {
				continue
			}
			kept := h.msgs[:0]
			for _, m := range h.msgs {
				if m.Pattern != sn.name {
					kept = append(kept, m)
					continue
				}
				if !s.q.push(m) {
					s.st.dropped.Add(1)
				}
				s.held.Add(-1)
			}
			clear(h.msgs[len(kept):])
			h.msgs = kept
		}
	}
}
