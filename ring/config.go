package ring

import (
	"fmt"

	"github.com/shardis/shardis/hashtag"
)

// Algorithm names a placement algorithm: how shards are laid out on the
// ring and how a key's hash picks one.
type Algorithm string

// The placement algorithms. See the package documentation for the exact
// behaviour each one reproduces.
const (
	// Murmur3 is the library's own consistent hashing (the default).
	Murmur3 Algorithm = "murmur3"
	// Jedis is Jedis 2.10 - 6.x ShardedJedis / JedisSharding placement.
	Jedis Algorithm = "jedis"
	// JedisLegacy is Jedis 2.0 - 2.9 placement, which names the points of
	// named shards differently.
	JedisLegacy Algorithm = "jedis-legacy"
	// Ketama is twemproxy's "distribution: ketama".
	Ketama Algorithm = "ketama"
	// Modula is twemproxy's "distribution: modula".
	Modula Algorithm = "modula"
)

// MaxPoints is the largest number of virtual nodes (or modula slots) a ring
// may hold: 4,194,304. Larger configurations fail with ErrTooManyPoints,
// which New (and so every config parser that validates a ring) returns
// from the weights alone, before it allocates or hashes any point. The
// bound admits 1,000 shards of weight 4 each on the murmur3 ring
// (4,096,000 points: about 0.3 s and 90 MB to build on two cores), which
// is a total weight of 4,096 for murmur3, 26,214 for jedis and
// jedis-legacy, 26,214 servers for ketama (160 points each, whatever the
// weights) and a total weight of 4,194,304 for modula. Rings four times
// larger took seconds and hundreds of megabytes before anything failed.
const MaxPoints = 1 << 22

// Virtual nodes per unit of weight. Jedis fixes 160. The murmur3 ring uses
// 1024: with 160 points a shard's share of the ring varies by about
// 1/sqrt(160) = 8% (10 equal shards typically end up 13% and up to 24% off
// their fair share), with 1024 by about 3% (at most 9.4% off over 200
// random 10-shard label sets). Ketama spreads 160 points per server, scaled
// by weight.
const (
	// Murmur3PointsPerWeight is the number of murmur3 points per unit of
	// weight.
	Murmur3PointsPerWeight = 1024
	// JedisPointsPerWeight is the number of jedis and jedis-legacy points
	// per unit of weight, as in Jedis.
	JedisPointsPerWeight = 160
)

// Config describes a ring. The zero values of Algorithm, KeyHash and Tag
// select the algorithm's defaults; Ring.Config reports them filled in.
type Config struct {
	// Algorithm is the placement algorithm; "" means Murmur3.
	Algorithm Algorithm
	// KeyHash names the function that hashes keys; "" means the
	// algorithm's default:
	//   - murmur3: "murmur3" (the only choice);
	//   - jedis, jedis-legacy: "murmur" (MurmurHash64A, Jedis's
	//     Hashing.MURMUR_HASH) or "md5" (Hashing.MD5); the same function
	//     also places the virtual nodes, as in Jedis;
	//   - ketama, modula: "fnv1a_64" or any other twemproxy "hash:" name:
	//     one_at_a_time, md5, crc16, crc32, crc32a, fnv1_64, fnv1a_64,
	//     fnv1_32, fnv1a_32, hsieh, murmur, jenkins.
	KeyHash string
	// Tag names the hash-tag rule (see package hashtag: "none", "cluster",
	// "jedis", or a two-character pair such as "{}"); "" means "cluster"
	// for murmur3 and "none" for the other algorithms, as Jedis and
	// twemproxy hash whole keys unless configured otherwise.
	Tag string
	// Shards lists the servers. Locate returns indexes into this list.
	Shards []Shard
}

// settings is a validated configuration in the form the ring uses.
type settings struct {
	cfg Config // defaults filled in, Shards copied
	kh  keyHash
	tag hashtag.Rule
}

// WithDefaults returns c with the defaults of Algorithm, KeyHash and Tag
// filled in and the tag rule as package hashtag spells it, as Ring.Config
// reports them for a ring built from c; Shards is a copy, not checked.
// It refuses what New refuses of the three settings, with the same errors
// (ErrUnknownAlgorithm, ErrUnknownHash, ErrBadTag), and costs no ring
// build: it tells cheaply whether two configs name one placement rule.
func (c Config) WithDefaults() (Config, error) {
	st, err := c.normalize()
	if err != nil {
		return Config{}, err
	}
	return st.cfg, nil
}

// normalize fills in defaults and validates everything but the shards.
func (c Config) normalize() (settings, error) {
	var s settings
	if c.Algorithm == "" {
		c.Algorithm = Murmur3
	}
	var hashes map[string]keyHash
	var defHash, defTag string
	switch c.Algorithm {
	case Murmur3:
		hashes, defHash, defTag = murmur3Hashes, "murmur3", "cluster"
	case Jedis, JedisLegacy:
		hashes, defHash, defTag = jedisHashes, "murmur", "none"
	case Ketama, Modula:
		hashes, defHash, defTag = twemHashes, "fnv1a_64", "none"
	default:
		return s, fmt.Errorf("%w %q (want murmur3, jedis, jedis-legacy, ketama or modula)", ErrUnknownAlgorithm, string(c.Algorithm))
	}
	if c.KeyHash == "" {
		c.KeyHash = defHash
	}
	kh, ok := hashes[c.KeyHash]
	if !ok {
		return s, fmt.Errorf("%w %q for algorithm %s", ErrUnknownHash, c.KeyHash, c.Algorithm)
	}
	if c.Tag == "" {
		c.Tag = defTag
	}
	tag, err := hashtag.Parse(c.Tag)
	if err != nil {
		return s, err // wraps ErrBadTag and quotes the name
	}
	c.Tag = tag.String()
	c.Shards = append([]Shard(nil), c.Shards...)
	return settings{cfg: c, kh: kh, tag: tag}, nil
}

// validateShards checks what every algorithm requires of the shard list:
// at least one shard, valid addresses, positive weights, distinct names,
// labels and servers (addresses compared as serverKeys compares them).
func validateShards(shards []Shard) error {
	if len(shards) == 0 {
		return ErrNoShards
	}
	servers := make(serverSet, len(shards))
	labels := make(map[string]int, len(shards))
	for i, s := range shards {
		if err := validateAddr(s.Addr); err != nil {
			return fmt.Errorf("%w %d: %w", ErrBadShard, i, err)
		}
		if s.Weight <= 0 {
			return fmt.Errorf("%w: shard %d (%s) has weight %d, want > 0", ErrBadWeight, i, s.Label(), s.Weight)
		}
		if j := servers.add(s.Addr, i); j >= 0 {
			if shards[j].Addr == s.Addr {
				return fmt.Errorf("%w: shards %d and %d both have address %s", ErrDuplicateShard, j, i, s.Addr)
			}
			return fmt.Errorf("%w: shards %d (%s) and %d (%s) are the same server", ErrDuplicateShard, j, shards[j].Addr, i, s.Addr)
		}
		if j, dup := labels[s.Label()]; dup {
			return fmt.Errorf("%w: shards %d and %d are both called %q", ErrDuplicateShard, j, i, s.Label())
		}
		labels[s.Label()] = i
	}
	return nil
}

// totalWeight returns the sum of the weights, or an error when the sum of
// perShard*weight exceeds limit.
func totalWeight(shards []Shard, perShard, limit int) (int, error) {
	total := 0
	for _, s := range shards {
		if s.Weight > (limit-total*perShard)/perShard {
			return 0, fmt.Errorf("%w: the weights ask for more than %d points (shard %s has weight %d)",
				ErrTooManyPoints, limit, s.Label(), s.Weight)
		}
		total += s.Weight
	}
	return total, nil
}
