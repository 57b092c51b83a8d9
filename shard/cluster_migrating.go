package shard

import (
	"sync"
	"sync/atomic"
	"time"
)

// migratingSlots are the slots whose master answered ASK or TRYAGAIN: a
// resharding moves their keys to another master. Reads of those slots go
// to the master, not to its replicas, which know nothing of the
// migration (MIGRATING is set on the master alone): a replica serves a
// read from the master's data, where a key already moved is gone, and
// answered nil for a key that exists, for as long as the migration ran.
// The master answers ASK for such a key instead, and the read follows it.
//
// A slot stays marked until a MOVED gives it another master (the
// migration ended), or for migratingHold after the last ASK or TRYAGAIN
// for it (a migration abandoned with SETSLOT STABLE sends no MOVED).
type migratingSlots struct {
	n  atomic.Int32 // len(at): reads check it alone while no slot migrates
	mu sync.Mutex
	at map[int]time.Time // slot -> the last ASK or TRYAGAIN for it
}

// migratingHold is how long a slot stays marked migrating after the last
// ASK or TRYAGAIN for it.
const migratingHold = 30 * time.Second

// mark notes an ASK or TRYAGAIN for slot.
func (m *migratingSlots) mark(slot int) {
	m.mu.Lock()
	if m.at == nil {
		m.at = map[int]time.Time{}
	}
	m.at[slot] = time.Now()
	m.n.Store(int32(len(m.at)))
	m.mu.Unlock()
}

// clear forgets slot: a MOVED gave it another master.
func (m *migratingSlots) clear(slot int) {
	if m.n.Load() == 0 {
		return
	}
	m.mu.Lock()
	delete(m.at, slot)
	m.n.Store(int32(len(m.at)))
	m.mu.Unlock()
}

// has reports whether slot is marked migrating.
func (m *migratingSlots) has(slot int) bool {
	if m.n.Load() == 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.at[slot]
	if ok && time.Since(at) > migratingHold {
		delete(m.at, slot)
		m.n.Store(int32(len(m.at)))
		return false
	}
	return ok
}

// noteMigrating marks slot migrating in the client's own cluster after
// an ASK or TRYAGAIN for cl (not for a call a migration's old cluster
// routed: that cluster serves no replica reads).
func (c *Client) noteMigrating(cl *call, slot int) {
	if cl.old != nil || slot < 0 {
		return
	}
	if r := c.cl(); r != nil && c.readReplicas.Load() {
		r.migrating.mark(slot)
	}
}
