package shard

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/errtext"
)

// ScanOptions filters a Scan.
type ScanOptions struct {
	Match string // MATCH pattern; "" = every key
	Count int    // COUNT hint per SCAN call; 0 = the server's default
	Type  string // TYPE filter (string, list, set, zset, hash, stream); "" = any
}

// Scanner walks the keys of every node with SCAN, one node after the
// other. In ring mode, and in cluster mode while no slot moves, each key
// is reported once: SCAN's own repeats are dropped, and in ring mode a key
// found on a node that does not own it (a stale copy left by auto-eject)
// is skipped. A Scan begun during a migration walks every node that may
// hold a key (docs/resharding.md) and remembers every key it reports:
// each key present for the whole Scan is reported exactly once, also when
// it moves during it. When the client's topology changes during a Scan
// (StartMigration, AbortMigration, or FinishMigration of a migration the
// Scan did not know of), the Scan, as it next asks for a page, goes on to
// walk the nodes a Scan begun then would, after those it planned, and
// from then on remembers every key it reports: a key present for the
// whole Scan is still reported, but one reported before the change may be
// reported a second time (a Scan begun outside a migration does not
// remember the keys of the nodes it walked). A ring Scan that meets its
// first migration (StartMigration from the ring it walks) counts its
// walks as those of the old nodes and walks the new topology's nodes
// after them: about two passes over the database in all, not three. A
// FinishMigration of the
// migration the Scan walks, and the fence's switches, add no walk; once
// no migration is on, the nodes left to walk that the client's topology
// does not list (the old topology's alone) are not walked: every key left
// them, and a copy found there is none of the client's. Once a migration
// into a Redis Cluster is finished, the Scan follows the cluster's slot
// moves as a cluster Scan does (below): the masters it walked count as
// walked as of then, and the master it was walking is walked again from
// its start.
//
// Memory: the keys a Scan remembers stay in memory until the Scanner is
// dropped. Outside a migration it holds the keys reported on the current
// node only (to drop SCAN's own repeats): as many as the largest node
// holds. A Scan begun during a migration holds every key it reports, and
// one that meets a change of topology every key reported from the change
// on: as many as the database holds. A key is remembered by a 16-byte
// ID (keyID), whatever its length: about 37 bytes each in all (measured
// at the end of a Scan of 50,000 keys of 106 bytes, which cost 148 bytes
// each when the keys themselves were kept), up to twice that while the
// set grows: some 2 to 4 GB for 50 million keys. A user who cannot afford
// it scans each node with SCAN (ForEachShard) outside a migration, or
// after it.
//
// A shard that auto-eject took out of the ring
// is not walked (it serves no key); any other node that fails ends the
// Scan with its error. Keys added or removed during the scan may or
// may not be seen, as with SCAN itself. In cluster mode every key a master
// holds is reported, also one the client's slot map does not give it (a
// slot being resharded, a map not refreshed yet), so a key whose slot
// moves during the Scan to a master not walked yet may be reported twice,
// as SCAN may. A cluster Scan refreshes the topology as it begins. Once
// the masters it planned are walked, it refreshes it again and walks the
// masters added meanwhile (a scale-out the client's map had not met), and,
// on each master walked whose slots grew since its walk began (a slot
// moved to it from a master walked later), the keys of those slots once
// more. The slots a master gained are those the refreshed table gives it
// and those it serves or imports as it tells itself (CLUSTER NODES, sent
// to each master as its walk begins, as it ends and once more at the
// end of the Scan): a slot
// still being migrated (IMPORTING/MIGRATING) when the Scan ends counts as
// gained by the importing master. A slot the table gave a master as its
// walk began that it did not hold then (moved away, the table not told
// yet) and that it holds at the end (moved back) is walked once more on
// it too. So a key present for the whole Scan is reported, also when its
// slot moves during it (once, or away from a master before its walk began
// and back), the move done or not when the Scan ends; a key met on both
// masters may be reported twice. A slot that leaves a master during its
// walk and comes back may show held in each of its CLUSTER NODES replies
// (as its walk begins, as it ends, at the end); but taking it back bumped
// the master's config epoch (or another import it took since the slot
// left did), so a master whose epoch grew during its walk is walked once
// more over all its slots, whatever other slots it gained or lost, its
// keys then reported twice (so are they when a master fails over to a
// replica and back during its walk: its epoch grew too); a slot it did
// not hold as its walk ended and holds at the end is walked once more on
// it. A master that refuses CLUSTER NODES (an ACL) is taken to hold, at
// the end, the slots the table gives it and those whose keys it holds
// (CLUSTER COUNTKEYSINSLOT for each other slot, one pipeline per master,
// sent only then): a key whose slot is still being migrated to it when
// the Scan ends is reported so too; it tells its config epoch by CLUSTER
// INFO instead, and one whose epoch grew since its walk began is walked
// once more over all its slots. One that refuses CLUSTER NODES and either
// of those cannot tell what moved to it: the Scan reports every key it
// meets, then ends with a *ScanIncompleteError (errors.Is
// ErrScanIncomplete), never missing a key silently. So does one whose
// walk was over and that cannot be reached at the end (it died or hangs,
// no replica promoted yet), or does not tell its slots and epoch then:
// a slot that left it during its walk and came back, or moved to it
// since, would not be seen. It is asked once, not waited for.
// Each master tells its slots and epoch before its first SCAN page, so a
// slot that leaves it and comes back around that page is seen too; one
// that tells them only after that page (it did not answer before) is
// walked once more over all its slots, its keys then reported twice.
// A master that fails and whose replica takes over within MaxRetryWait is
// walked on that replica, from its start, the keys already reported not
// reported again; one whose walk
// was over when a replica took over (a failover, planned or not) is not
// walked again on that replica, which holds the keys reported already. A
// Sentinel shard's SCAN waits for a new master within
// SentinelOptions.FailoverWait, as a read does; a shard whose master
// changed during its walk is walked again on the new master from its
// start (a cursor means nothing to another server), the keys already
// reported not reported again. A Scanner is not safe for concurrent use.
type Scanner struct {
	c     *Client
	opts  ScanOptions
	nodes []Node
	ni    int    // current node
	cur   string // current cursor on that node
	seen  map[keyID]struct{}
	ids   [2]maphash.Seed // keyID's seeds, drawn for this Scan
	// global keeps seen across nodes (a migration's scan, migrate_scan.go).
	global bool
	walked map[string]bool // cluster mode: the masters walked or planned (more)
	// slotOf is, in cluster mode, a slot that each planned master served
	// when it was planned: after a failover its current master is the
	// one that took over (replacement).
	slotOf map[string]int
	// asOf is, in cluster mode, for each master walked, the slot table
	// as of which its keys are covered: the client's when its walk began,
	// or the one a later pass over the slots it gained was planned from.
	asOf map[string]*cluster.Table
	// only holds, for a pass over some slots of a master walked already
	// (index into nodes), the slots whose keys it reports.
	only map[int]map[int]bool
	// passed holds, for each master walked, the slots a pass (again)
	// went over once all walks were done: not passed over again.
	passed map[string]map[int]bool
	// extra holds, for each master walked, the slots it held as its
	// walk began (serving or importing them, as it told itself:
	// heldSlots) that the table did not give it, and kept the keys of
	// those slots its walk reported: a later pass over such a slot
	// (again) does not report them twice.
	extra map[string]map[int]bool
	kept  map[string]map[keyID]struct{}
	// epochAt holds, for each master walked, its config epoch as its
	// walk began (CLUSTER NODES, or CLUSTER INFO when an ACL refuses
	// that), or as a pass over all its slots was planned: one that grew
	// since tells of a slot it imported.
	epochAt map[string]uint64
	// endAt and heldEnd hold, for each master walked that told its
	// epoch and slots (CLUSTER NODES) as its walk began, its epoch and
	// the slots it held as that walk ended (noteEnd): an epoch that grew
	// only after tells of slots imported after the walk, which are
	// passed over alone; one that grew during the walk, of a slot that
	// may have left it and come back while the cursor went on.
	endAt   map[string]uint64
	heldEnd map[string]map[int]bool
	// blind holds, for each master walked that refused both as its
	// walk began, the refusal: its epoch then is not known.
	blind map[string]error
	// incomplete is the error the Scan ends with once every key is
	// reported when a master could not tell what it holds (unprovable).
	incomplete error
	// lacking holds, for each master walked, the slots the table gave
	// it as its walk began that it did not hold (moved away, the table
	// not told yet): a pass goes over those it holds at the end (again).
	lacking map[string]map[int]bool
	// took maps a master that took over from one walked already (a
	// failover after its walk) to that one: it holds the keys reported
	// already, and is not walked again (more, again).
	took map[string]string
	// retell: the current master did not answer (heldSlots) as its walk
	// began, before its first page: noteHeld asks it again once that
	// page is in.
	retell bool
	// late holds the masters whose slots and epoch were told only after
	// their first page (retell): a slot may have left and come back
	// around that page unseen, so again passes over all their slots once
	// more.
	late map[string]bool
	// fresh: the topology was refreshed as the walk began (cluster mode).
	fresh bool
	// mig and topo are the client's migration and placement as the Scan
	// last looked (follow): a change means keys may have moved to nodes
	// the plan does not walk after the point reached.
	mig  *migState
	topo *topology
	// from is, when the current node is a Sentinel shard's, its master
	// as the walk of its cursor began (see sentinelMoved).
	from   string
	fromOK bool
	buf    []string
	key    string
	err    error
	done   bool
}

// keyID stands for a key in the sets a Scan remembers (seen, kept): two
// 64-bit hashes of it under seeds drawn for the Scan, 16 bytes whatever
// the key's length, where the key itself cost its length and a string
// header besides. Two keys of one Scan share an ID with a chance below
// n²/2¹²⁹ for n keys (under 10⁻²⁰ for a billion), and then the second is
// taken for the first and not reported.
type keyID [2]uint64

// id returns k's keyID for this Scan.
func (s *Scanner) id(k string) keyID {
	return keyID{maphash.String(s.ids[0], k), maphash.String(s.ids[1], k)}
}

// Scan returns a Scanner over every node's keys.
func (c *Client) Scan(opts ScanOptions) *Scanner {
	// Read before the plan: a change in between is met by follow.
	m, t := c.mig.Load(), c.topo.Load()
	nodes, global := c.scanPlan()
	s := &Scanner{c: c, opts: opts, nodes: nodes, global: global, cur: "0", seen: map[keyID]struct{}{}, mig: m, topo: t,
		ids: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	s.noteSlots()
	return s
}

// noteSlots records a slot of each master of the current cluster table
// that slotOf does not have yet (cluster mode outside a migration).
func (s *Scanner) noteSlots() {
	r := s.c.cl()
	if (s.global && s.slotOf == nil) || r == nil || s.c.mig.Load() != nil {
		return // resume sets slotOf for a Scan that outlived a migration
	}
	if s.slotOf == nil {
		s.slotOf = map[string]int{}
	}
	for _, sh := range r.Table().Shards() {
		if _, ok := s.slotOf[sh.Master.Addr]; !ok && len(sh.Ranges) > 0 {
			s.slotOf[sh.Master.Addr] = sh.Ranges[0].Start
		}
	}
}

// replacement returns, when n is no longer a master of the current
// cluster table (a replica took over after it failed), the master that
// serves the slot n served when the Scan planned it.
func (s *Scanner) replacement(n Node) (Node, bool) {
	slot, ok := s.slotOf[n.Addr]
	r := s.c.cl()
	if !ok || r == nil || s.c.mig.Load() != nil {
		return Node{}, false
	}
	st := r.state.Load()
	if st == nil {
		return Node{}, false
	}
	for _, m := range st.masters {
		if m.Addr == n.Addr {
			return Node{}, false
		}
	}
	return s.c.nodes.get(int(st.master[slot])).node, true
}

// switchTo walks to, the master that replaced the current node, from
// cursor 0 (a cursor means nothing to another server), keeping the keys
// seen so far so that those already reported are not reported again; or,
// when to is planned already, goes on to the next node.
func (s *Scanner) switchTo(to Node) {
	s.cur = "0"
	for _, n := range s.nodes {
		if n.Addr == to.Addr {
			s.ni++
			clear(s.seen)
			return
		}
	}
	s.nodes[s.ni] = to
	if s.walked != nil {
		s.walked[to.Addr] = true
	}
}

// Next advances to the next key, calling SCAN as needed. It returns false
// when every node is done or on error (see Err).
func (s *Scanner) Next(ctx context.Context) bool {
	if s.err == nil && ctx == nil {
		s.err = ErrNilContext
	}
	for {
		if s.err != nil || s.done {
			return false
		}
		if len(s.buf) > 0 {
			s.key, s.buf = s.buf[0], s.buf[1:]
			return true
		}
		s.follow()
		if !s.fresh && s.slotOf != nil {
			// The slots each master is taken to serve as its walk begins
			// (asOf) are the cluster's, not those of a map that missed a
			// move: a pass over a slot the map only caught up with later
			// would report its keys again. A failure here ends nothing:
			// the refresh at the end (more) reports its own.
			s.fresh = true
			_ = s.c.Refresh(ctx)
		}
		if s.ni >= len(s.nodes) {
			if s.more(ctx) {
				continue
			}
			s.done = true
			if s.err == nil {
				s.err = s.incomplete
			}
			return false
		}
		s.scanOnce(ctx)
	}
}

// follow looks, before each page and before the Scan ends, at whether
// the client's topology changed since it last looked: a migration begun
// (StartMigration), turned around (AbortMigration) or ended
// (FinishMigration), or one begun and ended between two looks. Keys then
// move to nodes the plan may not walk again after the point reached (a
// Scan begun before StartMigration planned the old nodes alone; one that
// meets a rollback on a new node sees keys go back to old nodes walked
// already), so the nodes a Scan begun now would walk are walked after
// those planned, unless the nodes left to walk hold them in that order
// already. From then on every key reported is remembered (global), as in
// a Scan begun during a migration; those reported before the first
// change were not, and may be reported again. A migration the Scan knew
// of that ended with its switch (FinishMigration: every key had moved) or
// that only changed phase (the fence's switch) needs no more walks: the
// plan made for it covers where its keys went. The cluster bookkeeping of
// a Scan begun on a cluster client (slotOf: replacement and the passes at
// the end) holds for an unchanged topology only, and stops.
func (s *Scanner) follow() {
	m, t := s.c.mig.Load(), s.c.topo.Load()
	if m == s.mig && t == s.topo {
		return
	}
	was, wasTopo, wasGlobal := s.mig, s.topo, s.global
	s.mig, s.topo = m, t
	s.global = true
	s.slotOf, s.heldEnd = nil, nil
	if m != nil && m == was {
		return // the fence switched the routing: planned for
	}
	from := s.ni
	if s.cur != "0" {
		from++ // its walk began before the change
	}
	if m == nil {
		s.dropUnlisted(from)
	}
	if m == nil {
		// Once the plan is set: the masters it adds are walked as a
		// cluster Scan walks them.
		defer s.resume()
	}
	if m == nil && was != nil && t == was.next {
		return // finished: every key had moved
	}
	start := from
	if m != nil && was == nil && !wasGlobal && wasTopo != nil && wasTopo.cl == nil && wasTopo.router == m.from {
		// The first change a ring Scan meets, a migration from the
		// topology it planned: no key moved before it (no migration was
		// on, and a ring moves no key by itself), so each walk done or
		// under way reported every key its node held throughout, and
		// counts as the walk of an old node the plan begins with: only
		// what the plan walks after those is added (the new topology's
		// nodes), not the whole database twice more. A cluster's walks
		// may have missed a slot that moved (the passes at the end
		// stop), and a migration met before may have moved keys during
		// them: those walk the whole plan after the change.
		start = 0
	}
	nodes, _ := s.c.scanPlan()
	if start < len(s.nodes) {
		nodes = s.unmatched(start, nodes)
	}
	s.nodes = append(s.nodes, nodes...)
}

// resume takes up again, once no migration is on and the client is a
// cluster client (a migration into a cluster finished), the cluster
// bookkeeping follow stopped: the client follows the cluster's slot moves
// from then on, and so must the Scan. Without it, a slot that moved from
// a master not walked yet to one walked already was reported by neither.
// The masters walked already count as walked as of the current table: a
// slot that moves to one of them from now on is passed over once more at
// the end (again). The walk under way, begun without a baseline (its
// slots and epoch as it began), starts over on a master, its keys
// reported already not reported again; on a node the cluster does not
// list (an old ring node: no key of the cluster), it ends.
func (s *Scanner) resume() {
	r := s.c.cl()
	if r == nil || r.Table() == nil {
		return
	}
	if _, ok := s.c.currentRouter().(*ClusterRouter); !ok {
		return
	}
	s.slotOf = map[string]int{}
	s.noteSlots()
	t := r.Table()
	if s.asOf == nil {
		s.asOf = map[string]*cluster.Table{}
	}
	for i, n := range s.nodes[:min(s.ni, len(s.nodes))] {
		if _, master := s.slotOf[n.Addr]; master && s.only[i] == nil {
			s.asOf[n.Addr] = t
		}
	}
	if s.ni < len(s.nodes) && s.cur != "0" {
		if _, master := s.slotOf[s.nodes[s.ni].Addr]; !master {
			s.ni++
		}
		s.cur = "0"
	}
}

// unmatched returns the nodes of want left once as many of its first
// nodes as can be are found in order (not necessarily next to one
// another), by address, among the walks planned from index start on;
// a pass over some slots only (only) is no walk of its node. Walking
// those after the planned ones walks want in order.
func (s *Scanner) unmatched(start int, want []Node) []Node {
	i := 0
	for k := start; k < len(s.nodes) && i < len(want); k++ {
		if _, part := s.only[k]; !part && s.nodes[k].Addr == want[i].Addr {
			i++
		}
	}
	return want[i:]
}

// dropUnlisted removes, once no migration is on, the nodes left to walk
// from index from on that the topology the client routes by does not
// list: those of an old topology alone, which hold no key of the client
// any more (every key moved before FinishMigration; a stray copy the
// mover left is none). Walked, a cluster client took every key found
// there for a master's (scanOwns) and reported such a copy, and the SCAN
// opened a pool again to a node that had retired.
func (s *Scanner) dropUnlisted(from int) {
	if from >= len(s.nodes) {
		return
	}
	listed := map[string]bool{}
	for _, n := range s.c.currentRouter().Nodes() {
		listed[n.Addr] = true
	}
	kept := s.nodes[:from]
	only := map[int]map[int]bool{} // a pass over some slots (again) keeps its own
	for i, n := range s.nodes[from:] {
		if !listed[n.Addr] {
			continue
		}
		if slots, ok := s.only[from+i]; ok {
			only[len(kept)] = slots
		}
		kept = append(kept, n)
	}
	for i, slots := range s.only {
		if i < from {
			only[i] = slots
		}
	}
	s.nodes, s.only = kept, only
}

// more runs, in cluster mode outside a migration, once the planned
// masters are walked: it refreshes the topology and plans the masters
// not walked yet, and reports whether there were any. A master added by
// a scale-out that the client's map did not know yet (no MOVED met, no
// refresh since) holds keys that moved to it, from a master walked or
// not; without this the Scan ended without them. A refresh that fails
// ends the Scan with its error.
func (s *Scanner) more(ctx context.Context) bool {
	if (s.global && s.slotOf == nil) || s.c.mig.Load() != nil {
		return false
	}
	if _, ok := s.c.currentRouter().(*ClusterRouter); !ok {
		return false
	}
	if err := s.c.Refresh(ctx); err != nil {
		s.err = errtext.Errorf("shardis: SCAN: looking for masters added since the Scan began: %w", err)
		return false
	}
	s.noteSlots()
	if s.walked == nil {
		s.walked = make(map[string]bool, len(s.nodes))
		for _, n := range s.nodes {
			s.walked[n.Addr] = true
		}
	}
	// A master walked already that a replica replaced since: the replica
	// holds the same keys, reported already. It is not a master added,
	// and its slots are those of the master it replaced (again).
	for _, w := range s.nodes {
		to, replaced := s.replacement(w)
		if !replaced || s.walked[to.Addr] {
			continue
		}
		s.walked[to.Addr] = true
		if s.took == nil {
			s.took = map[string]string{}
		}
		s.took[to.Addr] = w.Addr
		if t, ok := s.asOf[w.Addr]; ok {
			s.asOf[to.Addr] = t
		}
	}
	added := false
	for _, n := range s.c.currentRouter().Nodes() {
		if !s.walked[n.Addr] {
			s.walked[n.Addr] = true
			s.nodes = append(s.nodes, n)
			added = true
		}
	}
	return s.again(ctx) || added
}

// again plans, for each master walked whose slots grew since (a slot moved
// to it from a master walked later, or while it was walked: a reshard
// under way), one more pass over its keys in those slots only, and
// reports whether there was any. Without it the keys of such a slot were
// reported by neither master: they had left the one walked later and
// arrived after the other's walk. The slots a master gained are those the
// refreshed table gives it and those it serves or imports as it tells
// itself (heldSlots): a slot still being migrated (IMPORTING/MIGRATING)
// is its old owner's in the table, yet the keys moved so far sit on the
// importing master, and so does a slot whose move ended after the
// refresh. A master that refuses CLUSTER NODES tells by COUNTKEYSINSLOT
// (countedSlots) and CLUSTER INFO (infoEpoch); one that refuses those too
// makes the Scan end with a *ScanIncompleteError (unprovable). A master
// whose config epoch grew during its walk (or since it began, when not
// told as it ended: noteEnd) may have had a slot leave and come back
// while the cursor went on: all its slots are passed over once more. A
// slot is passed over once per master: a key that leaves its old owner
// after that pass began left it after its walk, which reported it.
func (s *Scanner) again(ctx context.Context) bool {
	r := s.c.cl()
	if r == nil || len(s.asOf) == 0 {
		return false
	}
	t := r.Table()
	if t == nil {
		return false
	}
	grew := func(addr string, slot int) bool {
		from := s.asOf[addr]
		if was := from.Master(slot).Addr; was == addr || (was == s.took[addr] && was != "") {
			return false
		}
		return !s.passed[addr][slot]
	}
	gained := map[string]map[int]bool{}
	add := func(addr string, slot int) {
		if gained[addr] == nil {
			gained[addr] = map[int]bool{}
		}
		gained[addr][slot] = true
	}
	for slot := 0; slot < cluster.SlotCount; slot++ {
		addr := t.Master(slot).Addr
		if _, walked := s.asOf[addr]; walked && grew(addr, slot) {
			add(addr, slot)
		}
	}
	var masters []string
	for _, sh := range t.Shards() {
		if _, walked := s.asOf[sh.Master.Addr]; walked {
			masters = append(masters, sh.Master.Addr)
		}
	}
	told := s.tellHeld(ctx, t, masters) // all masters at once
	for k, addr := range masters {
		n := Node{Name: addr, Addr: addr}
		held, epoch, epochOK, ok, failed := told[k].held, told[k].epoch, told[k].epochOK, told[k].ok, told[k].failed
		if told[k].refused != nil {
			// addr refused every command that tells the slots it
			// holds, or every one that tells its epoch: a slot that
			// moved to it half way, or left it and came back, is not
			// seen. The Scan goes on, and says so as it ends.
			s.unprovable(n, told[k].refused)
		}
		if failed != nil {
			// addr could not be reached (died, frozen, marked down) or
			// did not tell: a slot that left it during its walk and
			// came back, or moved to it since, is not seen, its keys
			// maybe missed. The Scan goes on with the table's view, and
			// says so as it ends.
			s.unprovable(n, failed)
		}
		if b := s.blind[addr]; b != nil {
			s.unprovable(n, b) // its epoch as its walk began is not known
		}
		end, ended := s.endAt[addr]
		was, known := s.epochAt[addr]
		if late := s.late[addr]; late || (known && epochOK && epoch > was && (!ended || end > was)) {
			// addr finished importing a slot since its walk began, and
			// during that walk when it told (SETSLOT NODE bumps the
			// importer's config epoch, unless it is the highest
			// already: then another import bumped it since the slot
			// left). A slot may have left it during its walk and come
			// back, its keys gone while the cursor passed them, also
			// when it gained or lost other slots meanwhile; which slot
			// no reply tells: all its slots are passed over once more.
			// So may one have when addr told its slots and epoch only
			// after its first page (late).
			delete(s.late, addr)
			if epochOK {
				if s.epochAt == nil {
					s.epochAt = map[string]uint64{}
				}
				s.epochAt[addr] = epoch
			}
			delete(s.endAt, addr) // a later import: all once more
			if !ok {
				held = map[int]bool{}
				for slot := range cluster.SlotCount {
					if t.Master(slot).Addr == addr {
						held[slot] = true
					}
				}
			}
			for slot := range held {
				if !s.passed[addr][slot] {
					add(addr, slot)
				}
			}
			continue
		}
		if !ok {
			continue // the table's view only
		}
		for slot := range held {
			again := s.lacking[addr][slot] || (ended && !s.heldEnd[addr][slot])
			if grew(addr, slot) || (again && !s.passed[addr][slot]) {
				// Gained since its walk began, or held again (a slot
				// that had left it as its walk began, or as it ended,
				// came back).
				add(addr, slot)
			}
		}
	}
	addrs := make([]string, 0, len(gained))
	for a := range gained {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	for _, a := range addrs {
		if s.passed == nil {
			s.passed = map[string]map[int]bool{}
		}
		if s.passed[a] == nil {
			s.passed[a] = map[int]bool{}
		}
		for slot := range gained[a] {
			s.passed[a][slot] = true
		}
		s.asOf[a] = t
		if s.only == nil {
			s.only = map[int]map[int]bool{}
		}
		s.only[len(s.nodes)] = gained[a]
		s.nodes = append(s.nodes, Node{Name: a, Addr: a})
	}
	return len(addrs) > 0
}

// unprovable records that master n refused (refusal, an ACL) the commands
// that tell which slots it holds or whether one left it and came back:
// the Scan reports every key it meets, then ends with a
// *ScanIncompleteError (the first such master's).
func (s *Scanner) unprovable(n Node, refusal error) {
	if s.incomplete == nil {
		s.incomplete = &ScanIncompleteError{Node: n, Err: refusal}
	}
}

// Key returns the current key.
func (s *Scanner) Key() string { return s.key }

// Err returns the first error met, if any.
func (s *Scanner) Err() error { return s.err }

func (s *Scanner) scanOnce(ctx context.Context) {
	n := s.nodes[s.ni]
	if s.cur == "0" && s.c.scanSkips(n) {
		// Decided as the node comes up, not when the Scan began: a
		// shard restored meanwhile is walked, one ejected meanwhile is
		// not (its keys are on the shards that serve them now).
		s.ni++
		return
	}
	args := []any{s.cur}
	if s.opts.Match != "" {
		args = append(args, "MATCH", s.opts.Match)
	}
	if s.opts.Count > 0 {
		args = append(args, "COUNT", s.opts.Count)
	}
	if s.opts.Type != "" {
		args = append(args, "TYPE", s.opts.Type)
	}
	if to, ok := s.replacement(n); ok {
		s.switchTo(to)
		return
	}
	if s.cur == "0" && s.slotOf != nil && s.only[s.ni] == nil {
		// A whole walk begins: the keys of the slots n serves in the
		// current table are covered.
		if s.asOf == nil {
			s.asOf = map[string]*cluster.Table{}
		}
		s.retell = false
		if r := s.c.cl(); r != nil && r.Table() != nil {
			s.asOf[n.Addr] = r.Table()
			// What n holds beyond its slots in the table, and its
			// config epoch, before its first page: a slot that left n
			// and came back between this page and a later question
			// would look held all along, its keys missed by the page.
			// A master that died is asked once, not waited for
			// (heldSlots); one that could not tell is asked again
			// once the page is in (noteHeld).
			s.retell = !s.noteHeld(ctx, n, s.asOf[n.Addr])
		}
	}
	sh := s.c.sentinelShardOf(n)
	if sh != nil && s.cur == "0" {
		s.from, s.fromOK = sh.currentMaster()
	}
	reply, err := s.scanNode(ctx, n, false, "SCAN", args...)
	if err != nil {
		if to, ok := s.replacement(n); ok && ctx.Err() == nil && !s.c.closed.Load() {
			s.switchTo(to)
			return
		}
		s.err = err
		return
	}
	vals, err := redis.Values(reply, nil)
	if err != nil || len(vals) != 2 {
		s.err = fmt.Errorf("shardis: SCAN on %s: unexpected reply %v", n, reply)
		return
	}
	cur, err1 := redis.String(vals[0], nil)
	keys, err2 := redis.Strings(vals[1], nil)
	if err1 != nil || err2 != nil {
		s.err = fmt.Errorf("shardis: SCAN on %s: unexpected reply %v", n, reply)
		return
	}
	only := s.only[s.ni]
	if s.cur == "0" && only == nil && s.retell && s.asOf[n.Addr] != nil {
		// n did not answer before its first page and answers now.
		s.retell = false
		s.noteHeld(ctx, n, s.asOf[n.Addr])
		if s.late == nil {
			s.late = map[string]bool{}
		}
		s.late[n.Addr] = true
	}
	if only != nil && s.cur == "0" {
		// A pass over the slots n gained: the keys of those slots its
		// whole walk reported already are not reported again.
		for k := range s.kept[n.Addr] {
			s.seen[k] = struct{}{}
		}
	}
	for _, k := range keys {
		id := s.id(k)
		if _, dup := s.seen[id]; dup {
			continue
		}
		if only != nil && !only[cluster.Slot(k)] {
			continue // a pass over some slots only (again)
		}
		// A copy the node does not own is skipped without counting as
		// seen: during a migration (seen kept across nodes) a stray copy
		// walked first would hide the owner's.
		if !s.c.owns(n, k) {
			continue
		}
		s.seen[id] = struct{}{}
		s.buf = append(s.buf, k)
		if extra := s.extra[n.Addr]; only == nil && extra[cluster.Slot(k)] {
			s.kept[n.Addr][id] = struct{}{}
		}
	}
	if sh != nil && s.sentinelMoved(ctx, sh) {
		// The shard failed over during the walk: the cursor, and the
		// reply to it if the new master gave it, mean nothing there
		// (each server's hash table is its own). The keys are real
		// ones; the walk starts over on the new master, those reported
		// already not reported again.
		s.cur = "0"
		s.from, s.fromOK = sh.currentMaster()
		return
	}
	if cur == "0" {
		if only == nil {
			s.noteEnd(ctx, n)
		}
		s.ni++
		s.cur = "0"
		if !s.global {
			clear(s.seen)
		}
		return
	}
	s.cur = cur
}

// sentinelMoved reports whether the master of Sentinel shard sh is no
// longer the server the walk of the current cursor began on. The same
// server under another spelling (a host name the Sentinels announce and
// its address) is no move, as for the failover count (installed): the
// names are compared as sameServerLookup does, and the walk goes on
// under the new spelling, so that the lookup runs once per change.
func (s *Scanner) sentinelMoved(ctx context.Context, sh *sentShard) bool {
	now, ok := sh.currentMaster()
	if ok != s.fromOK {
		return true
	}
	if !ok || now == s.from {
		return false
	}
	if !s.c.sameServerLookup(ctx, now, s.from) {
		return true
	}
	s.from = now
	return false
}

// scanNode sends SCAN (or name) to n. In cluster mode the call is cut short as
// soon as a new table no longer lists n as a master (a replica took over
// after it failed), instead of trying the dead master until MaxRetryWait.
// With once, a master that cannot be reached fails it at once (call.once).
func (s *Scanner) scanNode(ctx context.Context, n Node, once bool, name string, args ...any) (any, error) {
	r := s.c.cl()
	if _, ok := s.slotOf[n.Addr]; !ok || r == nil {
		return s.c.nodeCall(ctx, n, once, name, args...)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	remove := r.watch.add(func() {
		if _, replaced := s.replacement(n); replaced {
			cancel()
		}
	})
	defer remove()
	return s.c.nodeCall(sctx, n, once, name, args...)
}

// nodeCall sends one command to a named node. With once, a node that
// cannot be reached fails the command at once (call.once). The command is
// an operation of its own for the Start and Finish hooks, as a Do is: a
// tracer makes a span of each SCAN page, which holds the page's failed
// attempts, rather than hanging them on the caller's span.
func (c *Client) nodeCall(ctx context.Context, n Node, once bool, name string, args ...any) (any, error) {
	if c.closed.Load() {
		return nil, ErrClosed
	}
	i, ok := c.nodes.lookup(n.Addr)
	if !ok {
		return nil, fmt.Errorf("%w: unknown node %s", ErrNoNodes, n)
	}
	// group -1: the call is addressed to n, not routed by a slot, so a
	// retry must not send it to slot 0's master (routeSlot).
	cl := &call{name: name, args: args, node: i, group: -1, once: once}
	var b *batch
	var op *Op
	if c.obs != nil && c.obs.ops {
		b = &batch{reqs: make([]request, 1), calls: []*call{cl}, args: args}
		ctx, op = c.startOp(ctx, name, b, false)
	}
	c.execute(ctx, []*call{cl})
	c.opFinish(ctx, op, b, cl.err)
	return cl.reply, cl.err
}

// owns reports whether node n serves key under the current routing.
func (c *Client) owns(n Node, key string) bool {
	return c.scanOwns(n, key)
}
