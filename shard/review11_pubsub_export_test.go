package shard

// Review11Reconcile places the names as the subscription's loop does
// (subscribes what a node lacks, unsubscribes what left it), the lock
// being held by h: replies read meanwhile wait for Release.
func (h *HeldSubscription) Review11Reconcile() { h.s.reconcile() }
