package shard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
)

// heldSlots returns the slots whose keys master n may hold, as it sees
// them itself: those it serves and those it is importing (the "myself"
// line of its CLUSTER NODES, "[slot-<-id]" markers included). A slot
// being resharded into it is still its old owner's in every slot map
// (CLUSTER SHARDS, CLUSTER SLOTS), yet the importing master holds the keys
// moved so far. ok is false when the master could not tell (marked down,
// failing, an ACL that refuses CLUSTER NODES, no "myself" line). A
// master that cannot be reached is asked once, not until MaxRetryWait:
// one that died after its walk (SIGKILL, no replica or none promoted
// yet) held keys reported already, and the Scan does not wait for it.
// refusal is n's error reply when it answered CLUSTER NODES with one (an
// ACL that refuses it): countedSlots and infoEpoch may tell instead.
// epoch is n's config epoch, when epochOK. failed says why n did not
// tell its slots or epoch when it did not refuse (not reached, marked
// down, a reply without them).
func (s *Scanner) heldSlots(ctx context.Context, n Node) (held map[int]bool, epoch uint64, epochOK, ok bool, refusal, failed error) {
	if i, known := s.c.nodes.lookup(n.Addr); !known || s.c.nodes.get(i).down.Load() {
		// not to wait on a master that does not answer
		return nil, 0, false, false, nil, fmt.Errorf("%w: %s", ErrNodeDown, n)
	}
	reply, err := s.scanNode(ctx, n, true, "CLUSTER", "NODES")
	if err != nil {
		if refusal = refusalOf(err); refusal != nil {
			return nil, 0, false, false, refusal, nil
		}
		return nil, 0, false, false, nil, err
	}
	text, err := redis.String(reply, nil)
	if err != nil {
		return nil, 0, false, false, nil, fmt.Errorf("shardis: CLUSTER NODES on %s: %w", n, err)
	}
	held, ok = parseHeldSlots(text)
	epoch, epochOK = parseMyEpoch(text)
	if !ok || !epochOK {
		failed = fmt.Errorf("shardis: CLUSTER NODES on %s: %w", n, errNoMyself)
	}
	return held, epoch, epochOK, ok, nil, failed
}

// errNoMyself: a CLUSTER NODES reply without a readable "myself" line.
var errNoMyself = errors.New("no readable slots and config epoch of the node itself")

// refusalOf returns err when it is a server's error reply (an answer: the
// node is up and said no, as an ACL does), nil otherwise.
func refusalOf(err error) error {
	if re := (redis.Error("")); errors.As(err, &re) {
		return err
	}
	return nil
}

// infoEpoch is n's config epoch as CLUSTER INFO tells it
// (cluster_my_epoch), for a master that refuses CLUSTER NODES: an ACL
// that refuses the one may allow the other. refusal is n's error reply,
// if it gave one; failed says why it did not tell otherwise.
func (s *Scanner) infoEpoch(ctx context.Context, n Node) (epoch uint64, ok bool, refusal, failed error) {
	reply, err := s.scanNode(ctx, n, true, "CLUSTER", "INFO")
	if err != nil {
		if refusal = refusalOf(err); refusal != nil {
			return 0, false, refusal, nil
		}
		return 0, false, nil, err
	}
	text, err := redis.String(reply, nil)
	if err != nil {
		return 0, false, nil, fmt.Errorf("shardis: CLUSTER INFO on %s: %w", n, err)
	}
	if epoch, ok = parseInfoEpoch(text); !ok {
		return 0, false, nil, fmt.Errorf("shardis: CLUSTER INFO on %s: %w", n, errNoMyEpoch)
	}
	return epoch, true, nil, nil
}

// errNoMyEpoch: a CLUSTER INFO reply without a readable cluster_my_epoch.
var errNoMyEpoch = errors.New("no readable cluster_my_epoch")

// parseInfoEpoch reads cluster_my_epoch from a CLUSTER INFO reply.
func parseInfoEpoch(text string) (uint64, bool) {
	for line := range strings.SplitSeq(text, "\n") {
		v, found := strings.CutPrefix(strings.TrimSpace(line), "cluster_my_epoch:")
		if !found {
			continue
		}
		e, err := strconv.ParseUint(v, 10, 64)
		return e, err == nil
	}
	return 0, false
}

// countedSlots is heldSlots for a master that refuses CLUSTER NODES: the
// slots table t gives n, and those it does not whose keys n holds
// (CLUSTER COUNTKEYSINSLOT, one pipeline): a slot being resharded into n
// is still its old owner's in every slot map, and COUNTKEYSINSLOT is
// refused by fewer ACLs than CLUSTER NODES. Asked only as the Scan ends
// (again), never per page. ok is false when n did not answer them all;
// refusal is then its first error reply, if it gave one (an ACL that
// refuses COUNTKEYSINSLOT too); failed says why it did not answer them
// all otherwise.
func (s *Scanner) countedSlots(ctx context.Context, n Node, t *cluster.Table) (held map[int]bool, ok bool, refusal, failed error) {
	i, known := s.c.nodes.lookup(n.Addr)
	if !known || s.c.closed.Load() {
		return nil, false, nil, fmt.Errorf("%w: unknown node %s", ErrNoNodes, n)
	}
	held = map[int]bool{}
	calls := make([]*call, 0, cluster.SlotCount)
	slots := make([]int, 0, cluster.SlotCount)
	for slot := range cluster.SlotCount {
		if t.Master(slot).Addr == n.Addr {
			held[slot] = true
			continue
		}
		slots = append(slots, slot)
		calls = append(calls, &call{name: "CLUSTER", args: []any{"COUNTKEYSINSLOT", slot}, node: i, group: -1, once: true})
	}
	s.c.execute(ctx, calls)
	for j, cl := range calls {
		count, err := redis.Int64(cl.reply, cl.err)
		if err != nil {
			if refusal = refusalOf(cl.err); refusal != nil {
				return nil, false, refusal, nil
			}
			return nil, false, nil, fmt.Errorf("shardis: CLUSTER COUNTKEYSINSLOT on %s: %w", n, err)
		}
		if count > 0 {
			held[slots[j]] = true
		}
	}
	return held, true, nil, nil
}

// endTold is what a master told, as a round of the Scan's end check
// asked (tellHeld), of the slots whose keys it holds and of its config
// epoch: as heldSlots returns them, or, when it refused CLUSTER NODES,
// as countedSlots and infoEpoch do. refused is then the first error reply
// of those two (an ACL that refuses them too); failed says why it did not
// tell otherwise.
type endTold struct {
	held            map[int]bool
	epoch           uint64
	epochOK, ok     bool
	refused, failed error
}

// tellLimit bounds how many masters tellHeld asks at once: each ask of a
// master that refuses CLUSTER NODES is a pipeline of some thousands of
// COUNTKEYSINSLOT.
const tellLimit = 16

// tellHeld asks each master of addrs, in parallel (at most tellLimit at
// once), what heldSlots tells, or countedSlots and infoEpoch for one that
// refuses CLUSTER NODES, and returns the answers by index. Asked one
// after another, in every round of the end check, the COUNTKEYSINSLOT
// pipelines of the masters added up. The answers are read after, in
// order, by again: nothing of the Scanner is written here.
func (s *Scanner) tellHeld(ctx context.Context, t *cluster.Table, addrs []string) []endTold {
	out := make([]endTold, len(addrs))
	sem := make(chan struct{}, tellLimit)
	var wg sync.WaitGroup
	for k, addr := range addrs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			n := Node{Name: addr, Addr: addr}
			var e endTold
			var refusal error
			e.held, e.epoch, e.epochOK, e.ok, refusal, e.failed = s.heldSlots(ctx, n)
			if refusal != nil {
				var countRefusal, infoRefusal, countFailed, infoFailed error
				e.held, e.ok, countRefusal, countFailed = s.countedSlots(ctx, n, t)
				e.epoch, e.epochOK, infoRefusal, infoFailed = s.infoEpoch(ctx, n)
				e.failed = cmp.Or(countFailed, infoFailed)
				e.refused = cmp.Or(countRefusal, infoRefusal)
			}
			out[k] = e
		})
	}
	wg.Wait()
	return out
}

// noteHeld records, as the whole walk of master n begins (its first page
// is in) with the slot table t, the slots n holds keys of that t does not
// give it and those t gives it that n does not hold (extra), so that the
// keys of those slots the walk reports are kept and a later pass over
// them (again) does not report them twice. The latter (lacking: the slot
// had moved away, the table not told yet) are walked once more on n if n
// holds them at the end: keys that came back to n after its walk began
// were not there for the whole walk, and SCAN may have missed them.
// It reports whether n answered CLUSTER NODES (with its slots or a
// refusal): false when n could not be reached or did not tell.
func (s *Scanner) noteHeld(ctx context.Context, n Node, t *cluster.Table) (answered bool) {
	if s.extra == nil {
		s.extra = map[string]map[int]bool{}
		s.lacking = map[string]map[int]bool{}
		s.kept = map[string]map[keyID]struct{}{}
	}
	delete(s.extra, n.Addr)
	delete(s.lacking, n.Addr)
	delete(s.kept, n.Addr)
	delete(s.epochAt, n.Addr)
	delete(s.blind, n.Addr)
	delete(s.endAt, n.Addr)
	delete(s.heldEnd, n.Addr)
	delete(s.late, n.Addr)
	held, epoch, epochOK, ok, refusal, _ := s.heldSlots(ctx, n)
	answered = ok || refusal != nil
	if refusal != nil {
		// An ACL that refuses CLUSTER NODES may allow CLUSTER INFO,
		// which tells the epoch; one that refuses both leaves the
		// Scan blind to a slot that leaves n and comes back (again).
		epoch, epochOK, refusal, _ = s.infoEpoch(ctx, n)
		if refusal != nil {
			if s.blind == nil {
				s.blind = map[string]error{}
			}
			s.blind[n.Addr] = refusal
		}
	}
	if epochOK {
		if s.epochAt == nil {
			s.epochAt = map[string]uint64{}
		}
		s.epochAt[n.Addr] = epoch
	}
	if !ok {
		return answered
	}
	if epochOK && refusal == nil {
		if s.heldEnd == nil {
			s.endAt, s.heldEnd = map[string]uint64{}, map[string]map[int]bool{}
		}
		s.heldEnd[n.Addr] = nil // noteEnd asks n as the walk ends
	}
	extra, lacking := map[int]bool{}, map[int]bool{}
	for slot := range held {
		if t.Master(slot).Addr != n.Addr {
			extra[slot] = true
		}
	}
	for slot := range cluster.SlotCount {
		if !held[slot] && t.Master(slot).Addr == n.Addr {
			extra[slot], lacking[slot] = true, true
		}
	}
	if len(lacking) > 0 {
		s.lacking[n.Addr] = lacking
	}
	if len(extra) > 0 {
		s.extra[n.Addr] = extra
		s.kept[n.Addr] = map[keyID]struct{}{}
	}
	return true
}

// noteEnd records, as the whole walk of master n ends, its config epoch
// and the slots it holds (CLUSTER NODES), when it told them as the walk
// began (noteHeld): again then tells a slot imported after the walk
// (passed over alone) from one imported during it, which may be a slot
// that left n during its walk and came back (all its slots passed over
// once more). When n does not tell, nothing is recorded, and any import
// since the walk began counts as one during it.
func (s *Scanner) noteEnd(ctx context.Context, n Node) {
	if _, asked := s.heldEnd[n.Addr]; !asked {
		return
	}
	held, epoch, epochOK, ok, _, _ := s.heldSlots(ctx, n)
	if !ok || !epochOK {
		delete(s.heldEnd, n.Addr)
		return
	}
	s.endAt[n.Addr], s.heldEnd[n.Addr] = epoch, held
}

// parseMyEpoch reads the config epoch of the "myself" line of a CLUSTER
// NODES reply.
func parseMyEpoch(text string) (uint64, bool) {
	for line := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !hasFlag(f[2], "myself") {
			continue
		}
		e, err := strconv.ParseUint(f[6], 10, 64)
		return e, err == nil
	}
	return 0, false
}

// parseHeldSlots reads the slots served or imported by the "myself" line
// of a CLUSTER NODES reply; a migrating marker ("[slot->-id]") adds
// nothing (the slot is listed as served too).
func parseHeldSlots(text string) (map[int]bool, bool) {
	for line := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !hasFlag(f[2], "myself") {
			continue
		}
		held := map[int]bool{}
		for _, r := range f[8:] {
			if inner, isMark := strings.CutPrefix(r, "["); isMark {
				slot, _, importing := strings.Cut(strings.TrimSuffix(inner, "]"), "-<-")
				if n, err := strconv.Atoi(slot); importing && err == nil && validSlot(n) {
					held[n] = true
				}
				continue
			}
			lo, hi, isRange := strings.Cut(r, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || !validSlot(a) || !validSlot(b) || a > b {
				return nil, false
			}
			for n := a; n <= b; n++ {
				held[n] = true
			}
		}
		return held, true
	}
	return nil, false
}

func hasFlag(flags, flag string) bool {
	for f := range strings.SplitSeq(flags, ",") {
		if f == flag {
			return true
		}
	}
	return false
}

func validSlot(n int) bool { return n >= 0 && n < cluster.SlotCount }
