package placement

import (
	"fmt"
	"math"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/ring"
)

// slotTable is the slots strategy's router: the owner of each of the 16384
// Redis Cluster hash slots, as an index into the layout.
type slotTable struct {
	owner [cluster.SlotCount]uint16
}

// Locate returns the owner of the key's slot.
func (t *slotTable) Locate(key string) int { return int(t.owner[cluster.Slot(key)]) }

// maxSlotShards is the most shards a slot table can give a slot each.
const maxSlotShards = cluster.SlotCount

// slotTargets returns how many slots each shard should own: the slot ranges
// that redis-cli --cluster create assigns to its masters, generalised to
// weights. redis-cli walks a float cursor in steps of 16384/masters and ends
// master i's range at lround(cursor + step - 1); here the step of a shard
// is its weight times 16384/total weight, so equal weights give exactly
// redis-cli's ranges (3 masters: 0-5460, 5461-10922, 10923-16383).
func slotTargets(shards []ring.Shard) ([]int, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("%w: no shards", ErrBadInput)
	}
	if len(shards) > maxSlotShards {
		return nil, fmt.Errorf("%w: %d shards, more than the %d hash slots", ErrBadInput, len(shards), maxSlotShards)
	}
	total := 0
	for _, s := range shards {
		if s.Weight <= 0 {
			return nil, fmt.Errorf("%w: shard %s has weight %d", ErrBadInput, s.Label(), s.Weight)
		}
		total += s.Weight
	}
	step := float32(cluster.SlotCount) / float32(total)
	counts := make([]int, len(shards))
	first, cursor := 0, float32(0)
	for i, s := range shards {
		last := int(math.Round(float64(cursor + step*float32(s.Weight) - 1)))
		if last > cluster.SlotCount-1 || i == len(shards)-1 {
			last = cluster.SlotCount - 1
		}
		if last < first {
			last = first
		}
		if first > cluster.SlotCount-1 {
			// A heavily weighted list left nothing for this shard.
			return nil, fmt.Errorf("%w: shard %s would own no hash slot", ErrBadInput, s.Label())
		}
		counts[i] = last - first + 1
		first = last + 1
		cursor += step * float32(s.Weight)
	}
	return counts, nil
}

func buildSlots(shards []ring.Shard) (Router, error) {
	counts, err := slotTargets(shards)
	if err != nil {
		return nil, err
	}
	t := &slotTable{}
	slot := 0
	for i, c := range counts {
		for j := 0; j < c; j++ {
			t.owner[slot] = uint16(i)
			slot++
		}
	}
	return t, nil
}

// addSlots appends shard s as a rebalance would: every old shard that owns
// more than its new target gives the surplus, its lowest-numbered slots
// first, to s.
func addSlots(base Router, shards []ring.Shard, s ring.Shard) (Router, error) {
	old := base.(*slotTable)
	grown := append(append([]ring.Shard(nil), shards...), s)
	targets, err := slotTargets(grown)
	if err != nil {
		return nil, err
	}
	t := &slotTable{owner: old.owner}
	owned := ownedSlots(old, len(shards))
	newIdx := uint16(len(shards))
	for i, slots := range owned {
		surplus := len(slots) - targets[i]
		for _, slot := range slots[:max(surplus, 0)] {
			t.owner[slot] = newIdx
		}
	}
	return t, nil
}

// removeSlots takes shard i out as a rebalance before CLUSTER FORGET would:
// its slots, lowest first, go to the surviving shards in list order, each
// receiving what it lacks of its new target. Survivors are renumbered to
// their index in the list without shard i.
func removeSlots(base Router, shards []ring.Shard, i int) (Router, error) {
	old := base.(*slotTable)
	rest := make([]ring.Shard, 0, len(shards)-1)
	rest = append(append(rest, shards[:i]...), shards[i+1:]...)
	targets, err := slotTargets(rest)
	if err != nil {
		return nil, err
	}
	owned := ownedSlots(old, len(shards))
	renumber := func(j int) uint16 {
		if j > i {
			return uint16(j - 1)
		}
		return uint16(j)
	}
	t := &slotTable{}
	for slot, o := range old.owner {
		t.owner[slot] = renumber(int(o))
	}
	freed := owned[i]
	for j := range rest {
		oldJ := j
		if j >= i {
			oldJ = j + 1
		}
		need := targets[j] - len(owned[oldJ])
		for ; need > 0 && len(freed) > 0; need-- {
			t.owner[freed[0]] = uint16(j)
			freed = freed[1:]
		}
	}
	// Rounding can leave a few slots over: the last survivor takes them.
	for _, slot := range freed {
		t.owner[slot] = uint16(len(rest) - 1)
	}
	return t, nil
}

// ownedSlots lists each shard's slots in ascending order.
func ownedSlots(t *slotTable, n int) [][]int {
	owned := make([][]int, n)
	for slot, o := range t.owner {
		owned[o] = append(owned[o], slot)
	}
	return owned
}
