package shard

import "context"

// HeldSubscription is a Subscription whose lock a test holds: its readers
// stop before handling anything they read until Release, so that the
// test decides what is pending on a connection when a reply arrives.
type HeldSubscription struct{ s *Subscription }

// HoldSubscription takes s's lock; call Release when done.
func HoldSubscription(s *Subscription) *HeldSubscription {
	s.mu.Lock()
	return &HeldSubscription{s}
}

// SUnsubscribe sends the SUNSUBSCRIBE commands as SUnsubscribe does.
func (h *HeldSubscription) SUnsubscribe(names ...string) error {
	return h.s.removeLocked(context.Background(), kindShard, names)
}

// SSubscribe sends the SSUBSCRIBE commands where the client's slot table
// says, as the subscription's loop would, and returns the wait that
// SSubscribe does; call it after Release.
func (h *HeldSubscription) SSubscribe(names ...string) (wait func(context.Context) error, err error) {
	w, err := h.s.addLocked(kindShard, names)
	if err != nil {
		return nil, err
	}
	done := w.left == 0
	h.s.reconcile()
	return func(ctx context.Context) error {
		if done {
			return nil
		}
		return h.s.await(ctx, w)
	}, nil
}

// Ping sends PING data on every connection, as Subscription.Ping does.
func (h *HeldSubscription) Ping(data string) error {
	for _, sc := range h.s.conns {
		if err := sc.ping(data, true); err != nil {
			return err
		}
	}
	return nil
}

// Release lets the readers go on.
func (h *HeldSubscription) Release() { h.s.mu.Unlock() }
