package shard

import "context"

// Review11Reconcile places the names as the subscription's loop does
// (subscribes what a node lacks, unsubscribes what left it), the lock
// being held by h: replies read meanwhile wait for Release.
func (h *HeldSubscription) Review11Reconcile() { h.s.reconcile() }

// Review11Subscribe sends the SUBSCRIBE commands as Subscribe does, the
// lock being held by h, and returns the wait that Subscribe does; call it
// after Release.
func (h *HeldSubscription) Review11Subscribe(names ...string) (wait func(context.Context) error, err error) {
	w, err := h.s.addLocked(kindChannel, names)
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
