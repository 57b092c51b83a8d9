package shard

import "fmt"

// ringView is a locator over one ring state of a RingRouter: every key of
// an operation planned by it (a pipeline's commands, a transaction's
// WATCH and tx.Do) is placed by the same ring, even when auto-eject takes
// a shard out of the ring or puts it back meanwhile. Placed key by key
// by the ring of each moment, a pipeline's SET and the GET after it went
// to different shards, and a transaction refused its own key as one of
// another shard.
type ringView struct {
	rr *RingRouter
	st *ringState
}

func (v *ringView) locate(key any) (int, int, error) {
	i, err := ringIndex(v.st, key)
	return i, i, err
}

func (v *ringView) groupLabel(group int) string {
	return ringLocator{rr: v.rr}.groupLabel(group)
}

// current reports whether the router still places keys by v's ring.
func (v *ringView) current() bool { return v.rr.state.Load() == v.st }

// viewer is a locator that can be fixed to the placement it has now.
type viewer interface {
	view() locator
}

// pinned returns loc fixed to its placement now when it follows a ring
// that auto-eject may change, else loc itself.
func pinned(loc locator) locator {
	if v, ok := loc.(viewer); ok {
		return v.view()
	}
	return loc
}

// view returns a ringView of the ring now; with every shard ejected it
// returns l, which says why no shard serves the key.
func (l ringLocator) view() locator {
	st := l.rr.state.Load()
	if st == nil || st.r == nil {
		return l
	}
	return st.view(l.rr)
}

// view returns the ring of the topology now, fixed to its placement
// now; a Router's placement is left as it was, followed live.
func (l liveLocator) view() locator {
	if v, ok := l.c.topo.Load().loc.(viewer); ok {
		return v.view()
	}
	return l
}

// errTxRingMoved fails a transaction whose keys auto-eject placed on
// another shard (a shard ejected or restored) after its WATCH, before
// anything of MULTI ... EXEC is sent: run on the node it WATCHed on, its
// writes went to a shard that no longer serves its keys, unseen by every
// later read, and its WATCH guarded nothing. It matches ErrTxAborted, and
// Client.Tx runs the transaction again, fn included, by the ring now.
var errTxRingMoved = fmt.Errorf("%w (auto-eject moved the transaction's keys to another shard after its WATCH)", ErrTxAborted)

// ringMoved reports whether the ring now places one of keys on another
// node than node, where loc (a transaction's locator) placed them.
func ringMoved(loc locator, node int, keys []any) bool {
	v, ok := loc.(*ringView)
	if !ok || v.current() {
		return false
	}
	st := v.rr.state.Load()
	for _, k := range keys {
		if i, err := ringIndex(st, k); err != nil || i != node {
			return true
		}
	}
	return false
}
