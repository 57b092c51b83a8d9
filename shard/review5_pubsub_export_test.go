package shard

import "errors"

// Review5Subscribe sends SUBSCRIBE for channels on s's connection to
// addr, the lock being held by h, as the placement loop does.
func (h *HeldSubscription) Review5Subscribe(addr string, channels ...string) error {
	sc := h.s.conns[addr]
	if sc == nil {
		return errors.New("review5: no connection to " + addr)
	}
	names := make([]subName, len(channels))
	for i, ch := range channels {
		names[i] = subName{kindChannel, ch}
	}
	return sc.subscribe(names)
}
