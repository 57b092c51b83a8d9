package bench

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/shardis/shardis/ring"
)

// ErrBadShards is wrapped by the errors of NewTreeMap.
var ErrBadShards = errors.New("shardis: bad shard list")

// jedisPointsPerWeight is the number of Jedis virtual nodes per unit of
// weight (Sharded.initialize: 160 * weight).
const jedisPointsPerWeight = 160

// TreeMap routes keys the way Jedis's ShardedJedis does, written the way its
// Java code works rather than the way package ring stores its points: the
// virtual nodes are a sorted slice of {hash, shard} pairs (what a
// java.util.TreeMap holds) and a lookup is sort.Search with a closure, the
// counterpart of TreeMap.tailMap(hash).firstKey().
//
// The points are the ones of ring.Jedis with the default "murmur" key hash,
// recomputed here rather than read from a ring (package ring does not export
// them): shard i of the list gets 160 x Weight points named
// "SHARD-<i>-NODE-<n>" when its Name is empty and "<Name>*<n>" when it is
// set, n from 0, each placed at the MurmurHash64A (seed 0x1234ABCD) of its
// name read as a signed 64-bit number; of two points at the same place the
// later one wins, as TreeMap.put overwrites. A key, hashed whole (no hash
// tag) with the same function, goes to the first point at or after its hash,
// else to the lowest point. The tests check that TreeMap and ring.Jedis
// agree key for key.
//
// A TreeMap is immutable and safe for concurrent use.
type TreeMap struct {
	points []treePoint
}

// treePoint is one virtual node: its signed hash and the owning shard's
// index in the list given to NewTreeMap.
type treePoint struct {
	hash  int64
	shard int
}

// NewTreeMap builds the Jedis ring of shards; Locate returns indexes into
// shards. Only Name and Weight matter. It fails, with an error wrapping
// ErrBadShards, on an empty list, a weight <= 0 or more than ring.MaxPoints
// points.
func NewTreeMap(shards []ring.Shard) (*TreeMap, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("%w: no shards", ErrBadShards)
	}
	total := 0
	for i, s := range shards {
		if s.Weight <= 0 {
			return nil, fmt.Errorf("%w: shard %d has weight %d, want > 0", ErrBadShards, i, s.Weight)
		}
		if s.Weight > (ring.MaxPoints-total)/jedisPointsPerWeight {
			return nil, fmt.Errorf("%w: more than %d points", ErrBadShards, ring.MaxPoints)
		}
		total += s.Weight * jedisPointsPerWeight
	}
	pts := make([]treePoint, 0, total)
	for i, s := range shards {
		for n := range s.Weight * jedisPointsPerWeight {
			var name string
			if s.Name == "" {
				name = "SHARD-" + strconv.Itoa(i) + "-NODE-" + strconv.Itoa(n)
			} else {
				name = s.Name + "*" + strconv.Itoa(n)
			}
			pts = append(pts, treePoint{hash: int64(murmur64A(name)), shard: i})
		}
	}
	// Sort keeping insertion order among equal hashes, then keep the last
	// point of each run of equal hashes: TreeMap.put lets the later win.
	slices.SortStableFunc(pts, func(a, b treePoint) int {
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		}
		return 0
	})
	out := pts[:0]
	for i, p := range pts {
		if i+1 < len(pts) && pts[i+1].hash == p.hash {
			continue
		}
		out = append(out, p)
	}
	return &TreeMap{points: slices.Clip(out)}, nil
}

// Locate returns the index of the shard that owns key.
func (t *TreeMap) Locate(key string) int {
	h := int64(murmur64A(key))
	i := sort.Search(len(t.points), func(i int) bool { return t.points[i].hash >= h })
	if i == len(t.points) {
		i = 0
	}
	return t.points[i].shard
}

// Points returns the number of distinct virtual nodes.
func (t *TreeMap) Points() int { return len(t.points) }
