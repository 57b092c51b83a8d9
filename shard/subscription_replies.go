package shard

import (
	"fmt"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
)

// onControl handles a confirmation or a pong. Caller holds s.mu.
func (s *Subscription) onControl(sc *subConn, v any) {
	defer s.roomMade() // an Unsubscribe may wait for it (waitUnsubRoom)
	switch m := v.(type) {
	case redis.Pong:
		if len(sc.pending) > 0 && sc.pending[0].fence {
			s.endFence(sc)
			return
		}
		cmd, ok := sc.match("pong", subName{})
		if ok && cmd.user {
			s.q.push(m)
		}
		if ok && cmd.moveFence {
			s.fenceDone(sc)
			s.releaseHolds(nil)
		}
		// The last reply a connection that carries nothing waited for:
		// close it (see reconcile).
		if sc.idle() && s.conns[sc.addr] == sc {
			s.dirty = true
			s.poke()
		}
	case redis.Subscription:
		k, subscribe := kindOfPush(m.Kind)
		sn := subName{k, m.Channel}
		cmd, matched := sc.match(m.Kind, sn)
		if matched && s.throttled && cmd.left == 0 && (sc.awaited() < s.awaitLimit/2 || sc.awaitedReplies() == 0 || sc.awaitedUnsubscribes() == 0) {
			// The names, to subscribe or stray (unsubscribeChunked),
			// that wait for room: subscribes and unsubscribes share it,
			// and a kind none of whose confirmations are awaited has
			// some of its own (roomFor).
			s.poke()
		}
		if subscribe {
			ws := s.want[sn]
			if ws == nil || !sc.sent[sn] {
				return // unsubscribed since; the UNSUBSCRIBE is on its way
			}
			if matched && sc.unsubscribing(sn) {
				// Unsubscribed and subscribed again since this SUBSCRIBE
				// was sent: the node will end it, then confirm the new one.
				return
			}
			if ws.announced && !ws.on[sc.addr] && s.subscribedAgain(sn, ws, sc.addr) {
				s.st.resubscribed.Add(1)
			}
			ws.on[sc.addr] = true
			if s.spread(sn) {
				if ws.had == nil {
					ws.had = map[string]bool{}
				}
				ws.had[sc.addr] = true
			}
			delete(s.retry, sc.addr)
			if !s.confirmedEverywhere(sn, ws) {
				return
			}
			for _, w := range ws.waiters {
				w.settle(nil)
			}
			ws.waiters = nil
			if !ws.announced {
				ws.announced = true
				s.q.push(redis.Subscription{Kind: m.Kind, Channel: m.Channel, Count: len(s.want)})
			}
			return
		}
		if matched || sc.sent[sn] {
			s.letGo(sc, sn)
		}
		// Messages another connection held back for sn come before its
		// confirmation (subscription_hold.go).
		s.releaseHoldsOf(sn)
		if matched {
			if cmd.user && cmd.tally.done(sn) {
				s.releasePattern(sn)
				s.q.push(redis.Subscription{Kind: m.Kind, Channel: m.Channel, Count: len(s.want)})
			}
			if s.want[sn] != nil {
				// Still wanted: another node may be waiting for this
				// one to let it go (see reconcile).
				s.dirty = true
				s.poke()
			}
		} else if sc.sent[sn] {
			// The server dropped it: its slot moved to another node.
			delete(sc.sent, sn)
			s.releaseHoldsOf(sn)
			if ws := s.want[sn]; ws != nil {
				delete(ws.on, sc.addr)
				s.st.moved.Add(1)
			}
			s.dirty = true
			s.poke()
			// The topology of the cluster the node belongs to: of the
			// old one, for a node of the old cluster of a client
			// built with Config.Migration while it waits.
			s.refreshClusterOf(sc.addr)
		}
		if sc.idle() && s.conns[sc.addr] == sc {
			s.dirty = true
			s.poke()
		}
	}
}

// onError handles an error reply: it answers the oldest pending command.
// Caller holds s.mu.
func (s *Subscription) onError(sc *subConn, re redis.Error) {
	defer s.roomMade() // an Unsubscribe may wait for it (waitUnsubRoom)
	s.st.serverErrors.Add(1)
	if len(sc.pending) == 0 {
		s.q.push(&SubscribeError{Node: s.node(sc.addr), Err: re})
		return
	}
	if sc.pending[0].fence {
		s.fencedError(sc, re)
		return
	}
	cmd := sc.pending[0]
	sc.pending = sc.pending[1:]
	if cmd.push != "pong" && !isSubscribePush(cmd.push) {
		sc.countUnsub(cmd.names, -1)
	}
	serr := &SubscribeError{Node: s.node(sc.addr), Command: cmd.cmd, Names: nameList(cmd.names), Err: re}
	if cmd.push == "pong" || !isSubscribePush(cmd.push) {
		// A refused unsubscribe (BUSY, say) left the names subscribed on
		// the node: it is sent again later. (A cluster SUNSUBSCRIBE,
		// which a node answers with MOVED, is fenced: see fencedError.)
		if cmd.push != "pong" {
			s.unsubscribeRefused(sc, cmd.names, re)
			for _, sn := range cmd.names {
				cmd.tally.done(sn) // answered: with the error, not a confirmation
			}
		}
		// The health PINGs' refusals, like their pongs, are not the
		// application's (ServerErrors counts them).
		if cmd.user {
			s.q.push(serr)
		}
		if cmd.moveFence {
			// Refused (BUSY), but answered after everything the node
			// sent before it: the move's fence is passed.
			s.fenceDone(sc)
			s.releaseHolds(nil)
		}
		return
	}
	// A name unsubscribed and subscribed again on sc since this command
	// was sent has a later SUBSCRIBE pending there, which answers for it:
	// this refusal concerns a subscription the application already left
	// (its Subscribe returned at the unsubscribe). Dropping the name here
	// dropped the new subscription too: its Subscribe returned this
	// refusal, and the channel, accepted by the node, never delivered.
	names := slices.DeleteFunc(slices.Clone(cmd.names), sc.subscribing)
	if len(names) == 0 {
		return
	}
	if len(names) < len(cmd.names) {
		serr.Names = nameList(names)
	}
	for _, sn := range names {
		if sc.sent[sn] {
			s.letGo(sc, sn) // the loop's next tick releases what waited for it
		}
		delete(sc.sent, sn)
	}
	s.dirty = true
	s.poke()
	switch code := cluster.ErrorCode(string(re)); code {
	case "MOVED":
		if rd, ok := cluster.ParseRedirect(string(re), sc.addr); ok && s.c.cl() != nil {
			s.st.moved.Add(int64(len(names)))
			s.pacedMoved(sc.addr, rd.Addr, names)
			s.applyMoved(sc.addr, rd.Slot, rd.Addr)
			return
		} else if s.c.cl() != nil {
			s.movedNoAddr(sc.addr, names)
			return
		}
	case "CLUSTERDOWN", "TRYAGAIN", "LOADING", "MASTERDOWN", "BUSY":
		// The node cannot serve now: try it again later. The names stay,
		// so the error is the node's, not a SubscribeError (which says
		// the names left).
		nerr := &NodeError{Node: s.node(sc.addr), Err: fmt.Errorf("%s: %w", cmd.cmd, re)}
		s.backoff(sc.addr, nerr)
		for _, sn := range names {
			if ws := s.want[sn]; ws != nil {
				for _, w := range ws.waiters {
					w.settle(nerr)
				}
				ws.waiters = nil
			}
		}
		return
	}
	// Refused for good (an ACL, say): the names leave the subscription,
	// before their callers learn it (a caller that reads Stats once its
	// Subscribe returned must not count them).
	for _, sn := range names {
		if ws := s.want[sn]; ws != nil {
			s.dropWant(sn)
			for _, w := range ws.waiters {
				w.settle(serr)
			}
		}
	}
	s.q.push(serr)
}

// nameList returns the names of names, in order.
func nameList(names []subName) []string {
	list := make([]string, len(names))
	for i, sn := range names {
		list[i] = sn.name
	}
	return list
}

// movedNoAddrHold is how long names refused with a MOVED that named no
// address wait before they are sent again.
const movedNoAddrHold = 50 * time.Millisecond

// movedNoAddr handles a MOVED that names no address the client can use
// ("?": the node announces no hostname, while the topology gives its IP):
// only the topology can say where the slot went. The names stay wanted;
// they wait movedNoAddrHold (sent again at once, they would meet the same
// MOVED at the same node as fast as it answers until the refresh is in)
// and are placed again by the refreshed table. They used to leave the
// subscription for good, as if an ACL had refused them. The topology
// read is that of the cluster whose node at from answered: while a
// client built with Config.Migration waits, its shard channels are on
// the old cluster, whose table only such a read corrects (refreshing the
// client's own cluster left the channel going back to the old owner
// every movedNoAddrHold, never delivering until the switch). Caller
// holds s.mu.
func (s *Subscription) movedNoAddr(from string, names []subName) {
	s.st.moved.Add(int64(len(names)))
	until := time.Now().Add(movedNoAddrHold)
	for _, sn := range names {
		if ws := s.want[sn]; ws != nil {
			ws.holdUntil = until
		}
	}
	s.refreshClusterOf(from)
}

// movedBounceWindow is how recent a MOVED from one node must be for a
// MOVED that sends the name back there to count as a bounce.
const movedBounceWindow = time.Second

// pacedMoved notes that the node at from answered names with a MOVED to
// to. A name that to itself sent away to from just before is bouncing
// between two nodes that disagree on its slot: a migration finished on
// its source (CLUSTER SETSLOT NODE) and not yet on its target, which,
// still importing, sends it back. Sent again at once, each SSUBSCRIBE met
// a MOVED within a round trip, hundreds a second, for as long as the
// disagreement lasted; such a name now waits movedNoAddrHold each time,
// and is placed again by the table as it stands then. Caller holds s.mu.
func (s *Subscription) pacedMoved(from, to string, names []subName) {
	now := time.Now()
	for _, sn := range names {
		ws := s.want[sn]
		if ws == nil {
			continue
		}
		if ws.movedFrom == to && now.Sub(ws.movedAt) < movedBounceWindow {
			ws.holdUntil = now.Add(movedNoAddrHold)
		}
		ws.movedFrom, ws.movedAt = from, now
	}
}

// refreshClusterOf asks for a read of the topology of the cluster whose
// node at from answered: while a client built with Config.Migration
// waits, a node of the old cluster, whose table only such a read corrects
// (refreshOld); else the client's own cluster (refreshTopology). Caller
// holds s.mu.
func (s *Subscription) refreshClusterOf(from string) {
	if old := s.c.oldClusterOf(from); old != nil {
		s.c.readOldLater(old, "") // not under s.mu: it dials
		return
	}
	s.refreshTopology()
}

// applyMoved notes a MOVED that the node at from answered, for the loop
// to write into a slot table (writeRedirects) before it places the names
// again. Writing it here, under s.mu, ran the SlotMap and NodeState hooks
// under s.mu: a hook that used the subscription (Ping, Subscribe, ...)
// waited for a lock its own caller held, until its ctx ended (for good
// without a deadline), and no reader of the subscription delivered
// meanwhile. Caller holds s.mu.
func (s *Subscription) applyMoved(from string, slot int, addr string) {
	s.redirects = append(s.redirects, subRedirect{from: from, slot: slot, addr: addr})
	s.poke()
}

// subRedirect is a MOVED noted by applyMoved: the node at from said slot
// is served at addr.
type subRedirect struct {
	from, addr string
	slot       int
}

// writeRedirects writes the MOVED replies noted since the last call, in
// the order they came, with s.mu released: writing a table reports the
// change to the hooks, which may use the subscription. Caller holds s.mu;
// it is held again on return, and only the loop calls it (one goroutine
// writes them, so they are written in order).
//
// Each goes into the slot table of the cluster its node belongs to. While
// a client built with Config.Migration waits, its shard channels are on
// the old cluster (waitingFrom), whose MOVED replies used to be written
// into the client's own table: that pointed a slot of the new cluster at
// a node of the old one until the next refresh, and the old table, never
// corrected, sent the channel back to the node that had just refused it,
// thousands of times a second, for the rest of the wait.
func (s *Subscription) writeRedirects() {
	for len(s.redirects) > 0 {
		rs := s.redirects
		s.redirects = nil
		s.mu.Unlock()
		for _, rd := range rs {
			if old := s.c.oldClusterOf(rd.from); old != nil {
				s.c.applyMovedHere(old, rd.slot, rd.addr)
				continue
			}
			s.c.applyMoved(rd.slot, rd.addr)
			s.refreshTopology()
		}
		s.mu.Lock()
	}
}

func isSubscribePush(push string) bool {
	_, subscribe := kindOfPush(push)
	return subscribe
}

// fencedError handles the error reply to a fenced SUNSUBSCRIBE (see
// sendFenced), which stays pending until its fence's pong. Caller holds
// s.mu.
//
// MOVED is what a node answers when the slot left it (Redis 7): the
// channels went with it, which is what the unsubscribe asked for, so the
// names the node had not confirmed yet count as confirmed. The slot table
// learns where the slot went, for the channels still wanted in it.
func (s *Subscription) fencedError(sc *subConn, re redis.Error) {
	head := &sc.pending[0]
	names := head.names
	head.names, head.left = nil, 0
	sc.countUnsub(names, -1)
	if cluster.ErrorCode(string(re)) == "MOVED" {
		// Whatever address it names ("?" too): the slot left the node.
		for _, sn := range names {
			s.letGo(sc, sn)
		}
		s.releaseHolds(nil)
		if head.user {
			for _, sn := range names {
				if head.tally.done(sn) {
					s.q.push(redis.Subscription{Kind: head.push, Channel: sn.name, Count: len(s.want)})
				}
			}
		}
		if s.c.cl() != nil {
			if rd, ok := cluster.ParseRedirect(string(re), sc.addr); ok {
				s.applyMoved(sc.addr, rd.Slot, rd.Addr)
			} else {
				// Of the old cluster, while a client built with
				// Config.Migration waits: its table is corrected by
				// its own topology alone (refreshing the client's
				// own cluster left it naming the node that refused).
				s.refreshClusterOf(sc.addr)
			}
		}
		s.dirty = true
		s.poke()
		return
	}
	s.unsubscribeRefused(sc, names, re)
	if head.user {
		list := make([]string, len(names))
		for i, sn := range names {
			list[i] = sn.name
			head.tally.done(sn) // answered: with the error, not a confirmation
		}
		s.q.push(&SubscribeError{Node: s.node(sc.addr), Command: head.cmd, Names: list, Err: re})
	}
}

// endFence handles the pong of a fenced command's PING: the command has
// all its replies. Caller holds s.mu.
func (s *Subscription) endFence(sc *subConn) {
	head := sc.pending[0]
	sc.pending = sc.pending[1:]
	sc.countUnsub(head.names, -1)
	for _, sn := range head.names {
		s.letGo(sc, sn)
	}
	s.releaseHolds(nil)
	if head.user {
		// Names the node neither confirmed nor refused before the pong
		// (no Redis does that): their unsubscribe is done all the same.
		for _, sn := range head.names {
			if head.tally.done(sn) {
				s.q.push(redis.Subscription{Kind: head.push, Channel: sn.name, Count: len(s.want)})
			}
		}
	}
	if sc.idle() && s.conns[sc.addr] == sc {
		s.dirty = true
		s.poke()
	}
}

// subscribing reports whether a subscribe of sn is pending on sc: sent
// after sn was unsubscribed there, when the reply being handled answers an
// earlier one (onError). Caller holds s.mu.
func (sc *subConn) subscribing(sn subName) bool {
	for _, p := range sc.pending {
		if p.push != "pong" && isSubscribePush(p.push) && slices.Contains(p.names, sn) {
			return true
		}
	}
	return false
}

// unsubscribing reports whether an unsubscribe of sn is pending on sc: a
// confirmation of sn's subscribe read now answers a command the
// unsubscribe ends, not the latest subscribe. Caller holds s.mu.
func (sc *subConn) unsubscribing(sn subName) bool { return sc.unsub[sn] > 0 }

// unsubscribeRefused handles an unsubscribe the node answered with an
// error: the names it carried are still subscribed there. Those the
// subscription no longer wants there (unsubscribed, or placed on another
// node since: a cluster home that moved away from a busy master) are
// marked as carried by sc again, so that reconcile unsubscribes them once
// the node's backoff has passed; left unmarked, one still wanted
// elsewhere stayed subscribed on the node for good, which delivered its
// messages twice. Caller holds s.mu.
func (s *Subscription) unsubscribeRefused(sc *subConn, names []subName, re redis.Error) {
	var still []subName
	for _, sn := range names {
		if !sc.sent[sn] { // not subscribed there again since
			still = append(still, sn)
		}
	}
	if len(still) == 0 {
		return
	}
	// First the backoff, which may move the cluster home: the names are
	// then placed where reconcile will put them.
	s.backoff(sc.addr, &NodeError{Node: s.node(sc.addr), Err: re})
	plan, _ := s.place()
	for _, sn := range still {
		if s.want[sn] == nil || !plan[sc.addr][sn] {
			sc.sent[sn] = true
		}
	}
	s.dirty = true
	s.poke()
}
