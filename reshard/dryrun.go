package reshard

import "github.com/shardis/shardis/shard"

// dryCountedElsewhere returns, in a dry run out of a cluster, the keys
// of moving (the moving keys of a page of old node n; redirected: which
// of them n redirected when measured) that the drain of another old node
// counted already, and that n's drain must not count again (neither
// scanned nor moved); nil when there are none.
//
// A move takes a key out of the old cluster wherever it finds it, so a
// key whose slot moves inside the old cluster while the mover runs is
// moved once: from the master it left (following the redirect) or from
// the one it went to, whichever comes first, and the other finds it
// gone. A dry run moves nothing, and such a key is found at both: the
// master it left redirects its MEMORY USAGE, and the mover measures it
// where it went; the master it went to finds it by its own SCAN, the
// slot's master in the mover's map being another. Both counted it, the
// report's keys and bytes running over by the slot's keys. Either
// finding now claims the key, and the second leaves it out. Only those
// keys are remembered. A key counted by its master of the map before its
// slot moves, and found again by the master it went to, is counted twice
// still: telling it apart would take remembering every key counted.
func (m *mover) dryCountedElsewhere(n shard.Node, moving []string, redirected []bool) map[string]bool {
	if !m.opts.DryRun || !m.fromCluster() {
		return nil
	}
	var out map[string]bool
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, k := range moving {
		if i >= len(redirected) || !redirected[i] {
			if old, err := m.from.Route(k); err == nil && old.Addr == n.Addr {
				continue // found where the map places it, and not redirected
			}
		}
		if _, ok := m.dryClaimed[k]; ok {
			if out == nil {
				out = map[string]bool{}
			}
			out[k] = true
			continue
		}
		if m.dryClaimed == nil {
			m.dryClaimed = map[string]struct{}{}
		}
		m.dryClaimed[k] = struct{}{}
	}
	return out
}
