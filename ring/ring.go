package ring

import (
	"fmt"

	"github.com/shardis/shardis/hashtag"
)

// Ring maps keys to shards. It is immutable once New returns, so any number
// of goroutines may use it at once.
//
// The zero Ring has no shard: Locate and LocateBytes return -1, Len and
// Points 0, Without fails with ErrNoShards, and Diff and DiffKeys give the
// zero Movement. Build rings with New.
type Ring struct {
	cfg Config
	kh  keyHash
	tag hashtag.Rule

	// points holds the sorted, distinct ring positions and owners the
	// index (into cfg.Shards) of the shard owning each. A key goes to the
	// first point at or after its position, wrapping to points[0].
	points []uint64
	owners []int32
	index  bucketIndex // narrows searches of points
	// slots replaces points for modula: a key goes to slots[hash % len].
	slots []int32
}

// New builds the ring described by cfg. It refuses, with an error wrapping
// one of the package's sentinels, an empty shard list, a weight <= 0, two
// shards with the same name or label or on one server (also under two
// spellings of its address: see the package documentation), a ring of
// more than MaxPoints points, an unknown algorithm, key hash or tag rule,
// and the algorithm-specific problems described in the package
// documentation.
func New(cfg Config) (*Ring, error) { return build(cfg, false) }

// Without returns the ring of the same configuration without the shards
// at the indexes out (into Config().Shards), the way twemproxy rebuilds
// its continuum when auto_eject_hosts takes servers out: the remaining
// shards keep their order and are placed as New places them, except that
// a ketama shard whose weight, among the remaining ones, earns no point
// owns no key instead of failing. Locate on the result returns indexes
// into its own Config().Shards. Without fails with ErrBadShard for an
// index out of range and ErrNoShards when no shard remains.
func (r *Ring) Without(out ...int) (*Ring, error) {
	drop := make([]bool, len(r.cfg.Shards))
	for _, i := range out {
		if i < 0 || i >= len(drop) {
			return nil, fmt.Errorf("%w: no shard with index %d", ErrBadShard, i)
		}
		drop[i] = true
	}
	cfg := r.cfg
	cfg.Shards = nil
	for i, s := range r.cfg.Shards {
		if !drop[i] {
			cfg.Shards = append(cfg.Shards, s)
		}
	}
	return build(cfg, true)
}

// build is New; pointless lets ketama shards own no point (Without).
func build(cfg Config, pointless bool) (*Ring, error) {
	st, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	shards := st.cfg.Shards
	if err := validateShards(shards); err != nil {
		return nil, err
	}
	r := &Ring{cfg: st.cfg, kh: st.kh, tag: st.tag}
	var pts ringPoints
	var tie tiePolicy
	switch st.cfg.Algorithm {
	case Murmur3:
		r.points, r.owners, err = murmur3Ring(shards)
	case Jedis, JedisLegacy:
		pts, err = jedisPoints(shards, st.kh, st.cfg.Algorithm == JedisLegacy)
		tie = tieLast
	case Ketama:
		pts, err = ketamaPoints(shards, pointless)
		tie = tieFirst
	case Modula:
		r.slots, err = modulaSlots(shards)
	}
	if err != nil {
		return nil, err
	}
	if tie != nil {
		r.points, r.owners = sortRing(pts.pos, pts.own, tie)
	}
	if r.points != nil {
		lo, span := r.kh.keySpace()
		r.index = newBucketIndex(r.points, lo, span).withOwners(r.points, r.owners)
	}
	return r, nil
}

// Locate returns the index, in Config().Shards, of the shard that owns key,
// or -1 for the zero Ring, which has no shard. It does not allocate.
func (r *Ring) Locate(key string) int {
	if len(r.cfg.Shards) <= 1 {
		return len(r.cfg.Shards) - 1 // 0, or -1 for the zero Ring
	}
	return r.locate(bytesOf(r.tag.Tag(key)))
}

// LocateBytes is Locate for a key held in a byte slice; both return the
// same index for the same bytes (-1 for the zero Ring). It does not
// allocate or modify key.
func (r *Ring) LocateBytes(key []byte) int {
	if len(r.cfg.Shards) <= 1 {
		return len(r.cfg.Shards) - 1 // 0, or -1 for the zero Ring
	}
	return r.locate(r.tag.TagBytes(key))
}

// locate returns the owner of a key that has been through tag extraction.
// The two hashes of the default and the Jedis rings are called directly
// and the owners table is read in line: lookups are a few nanoseconds, so
// a call or a switch is a sizeable share of one.
func (r *Ring) locate(tag []byte) int {
	var pos uint64
	switch r.kh {
	case khMurmur3:
		pos = murmur3Sum64(tag)
	case khJedisMurmur:
		pos = murmur64A(tag) ^ signBit
	default:
		pos = r.kh.position(tag)
	}
	if o := r.index.owner(pos); o >= 0 {
		return int(o)
	}
	return r.owner(pos)
}

// owner returns the shard index owning ring position pos.
func (r *Ring) owner(pos uint64) int {
	if r.slots != nil {
		return int(r.slots[pos%uint64(len(r.slots))])
	}
	if o := r.index.owner(pos); o >= 0 {
		return int(o)
	}
	return int(r.owners[r.search(pos)])
}

// search returns the index of the first point >= pos, wrapping to 0.
func (r *Ring) search(pos uint64) int {
	lo := r.index.search(r.points, pos)
	if lo == len(r.points) {
		return 0
	}
	return lo
}

// Shards returns a copy of the shard list, in configuration order.
func (r *Ring) Shards() []Shard {
	return append([]Shard(nil), r.cfg.Shards...)
}

// Shard returns shard i of the configuration, and false when i is out of
// range.
func (r *Ring) Shard(i int) (Shard, bool) {
	if i < 0 || i >= len(r.cfg.Shards) {
		return Shard{}, false
	}
	return r.cfg.Shards[i], true
}

// Len returns the number of shards.
func (r *Ring) Len() int { return len(r.cfg.Shards) }

// Config returns the ring's configuration with every default filled in:
// Algorithm, KeyHash and Tag are never empty (except for the zero Ring,
// whose Config is the zero Config). Shards is a copy.
func (r *Ring) Config() Config {
	c := r.cfg
	c.Shards = r.Shards()
	return c
}

// Points returns the number of distinct virtual nodes on the ring (points
// that collided count once), or the number of slots of a modula ring.
func (r *Ring) Points() int {
	if r.slots != nil {
		return len(r.slots)
	}
	return len(r.points)
}

// String describes the ring in one line, for logs.
func (r *Ring) String() string {
	return fmt.Sprintf("ring(%s, key hash %s, tag %s, %d shards, %d points)",
		r.cfg.Algorithm, r.cfg.KeyHash, r.cfg.Tag, len(r.cfg.Shards), r.Points())
}
