package placement

import (
	"testing"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/ring"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ranges returns the contiguous slot ranges of t, [first, last] per run.
func ranges(t *slotTable) [][3]int {
	var out [][3]int
	for slot, o := range t.owner {
		if len(out) > 0 && out[len(out)-1][0] == int(o) && out[len(out)-1][2] == slot-1 {
			out[len(out)-1][2] = slot
			continue
		}
		out = append(out, [3]int{int(o), slot, slot})
	}
	return out
}

func TestSlotsMatchRedisCliCreate(t *testing.T) {
	for _, c := range []struct {
		masters int
		want    [][3]int // owner, first, last
	}{
		{3, [][3]int{{0, 0, 5460}, {1, 5461, 10922}, {2, 10923, 16383}}},
		{6, [][3]int{{0, 0, 2730}, {1, 2731, 5460}, {2, 5461, 8191}, {3, 8192, 10922}, {4, 10923, 13652}, {5, 13653, 16383}}},
		{1, [][3]int{{0, 0, 16383}}},
	} {
		r, err := buildSlots(EqualLayout(c.masters).Shards)
		require.NoError(t, err)
		assert.Equal(t, c.want, ranges(r.(*slotTable)), "%d masters", c.masters)
	}
}

func TestSlotsFollowWeights(t *testing.T) {
	counts, err := slotTargets(WeightedLayout(1, 3).Shards)
	require.NoError(t, err)
	assert.Equal(t, []int{4096, 12288}, counts)
}

func countOwners(t *slotTable, n int) []int {
	c := make([]int, n)
	for _, o := range t.owner {
		c[o]++
	}
	return c
}

func TestSlotsAddRebalancesIntoNewShard(t *testing.T) {
	l := EqualLayout(3)
	base, err := buildSlots(l.Shards)
	require.NoError(t, err)
	next, err := addSlots(base, l.Shards, GeneratedShard(4, 1))
	require.NoError(t, err)
	old, nt := base.(*slotTable), next.(*slotTable)
	assert.Equal(t, []int{4096, 4096, 4096, 4096}, countOwners(nt, 4))
	for slot := range nt.owner {
		if nt.owner[slot] != old.owner[slot] {
			assert.Equal(t, uint16(3), nt.owner[slot], "slot %d moved between old shards", slot)
		}
	}
	// Each old shard gave its lowest slots.
	assert.Equal(t, uint16(3), nt.owner[0])
	assert.Equal(t, uint16(0), nt.owner[5460])
	assert.Equal(t, uint16(3), nt.owner[5461])
}

func TestSlotsRemoveSpreadsSlots(t *testing.T) {
	l := EqualLayout(4)
	base, err := buildSlots(l.Shards)
	require.NoError(t, err)
	for _, gone := range []int{0, 2, 3} {
		next, err := removeSlots(base, l.Shards, gone)
		require.NoError(t, err)
		old, nt := base.(*slotTable), next.(*slotTable)
		c := countOwners(nt, 3)
		assert.Equal(t, cluster.SlotCount, c[0]+c[1]+c[2])
		for _, n := range c {
			assert.InDelta(t, cluster.SlotCount/3, n, 1, "removing %d: %v", gone, c)
		}
		for slot, o := range old.owner {
			if int(o) == gone {
				continue
			}
			want := int(o)
			if want > gone {
				want--
			}
			assert.Equal(t, want, int(nt.owner[slot]), "slot %d of a survivor moved", slot)
		}
	}
}

func TestSlotsRejectBadLayouts(t *testing.T) {
	_, err := slotTargets(nil)
	assert.ErrorIs(t, err, ErrBadInput)
	_, err = slotTargets([]ring.Shard{GeneratedShard(1, 0)})
	assert.ErrorIs(t, err, ErrBadInput)
	_, err = slotTargets(EqualLayout(cluster.SlotCount + 1).Shards)
	assert.ErrorIs(t, err, ErrBadInput)
	// A tiny weight next to a huge one leaves no slot.
	_, err = slotTargets(WeightedLayout(1_000_000, 1).Shards)
	assert.ErrorIs(t, err, ErrBadInput)
}
