// Package ring maps keys to shards with client-side consistent hashing.
//
// A Ring is built once from a Config (New) and is then immutable: Locate
// and LocateBytes may be called from any number of goroutines, do not
// allocate, and return the index of the owning shard in Config.Shards.
//
// Internally every algorithm that places points on a circle keeps one
// sorted []uint64 of positions and a parallel []int32 of owners; a key goes
// to the first point at or after its hash, wrapping to the first point.
// Signed and 32-bit orders are mapped into uint64 so that one binary search
// serves all of them (Jedis's signed longs have their sign bit flipped).
//
// Before hashing, the tag rule of Config.Tag (see package hashtag) picks
// the part of the key that is hashed. A ring with a single shard always
// answers 0.
//
// # Algorithms
//
// murmur3 (the default) is this library's own ring. Each shard gets
// 1024 x Weight points (Murmur3PointsPerWeight); point n (from 0) of a
// shard sits at
//
//	murmur3.Sum64([]byte(shard.Label() + "-" + strconv.Itoa(n)))
//
// (github.com/spaolacci/murmur3: the first 64 bits of MurmurHash3 x64-128
// with seed 0). Keys are hashed with the same function after tag extraction
// (default rule "cluster", so "{user1}.a" and "{user1}.b" stay together).
// When two shards' points collide, the shard with the bytewise smaller
// label keeps the point. Placement therefore depends on the labels and
// weights only, never on the order of the shard list. This naming is a
// compatibility promise: it will not change.
//
// jedis reproduces, byte for byte, the ring of Jedis 2.10 - 3.x ShardedJedis
// (and of JedisSharding in Jedis 4.x - 6.x, whose shards are all unnamed):
// shards are taken in list order, and shard i gets 160 x Weight points named
// "SHARD-<i>-NODE-<n>" when its Name is empty or "<Name>*<n>" when it is
// set, n from 0. Each name's UTF-8 bytes are hashed with MurmurHash64A
// (seed 0x1234ABCD, 8-byte blocks read little-endian) and the result is
// taken as a signed 64-bit number. When two points collide the one inserted
// later wins (Jedis's TreeMap.put overwrites). A key goes to the first point
// >= its signed hash, else to the lowest point. KeyHash "md5" selects
// Jedis's Hashing.MD5 instead (the first four digest bytes read
// little-endian as an unsigned 32-bit value), for points and keys alike.
// Jedis accepts two shards with the same name and silently gives all points
// of the first to the second; New refuses that.
//
// jedis-legacy is the ring of Jedis 2.0 - 2.9: the same, except that the
// points of a named shard are "<Name>*<Weight><n>" (weight 1, name "a":
// "a*10", "a*11", ..., "a*1159").
//
// ketama reproduces twemproxy's (nutcracker's) "distribution: ketama". A
// server's continuum name is its Name, else its Addr ("host:port"), else
// just the host when the port is 11211. Servers are ordered as twemproxy
// orders them, by continuum name (shorter names first, then bytewise). A
// server of weight w in a pool of n servers with total weight W gets
// floor(w/W x 40 x n) x 4 points, computed in float32 exactly as twemproxy
// does; the MD5 digest of "<continuum name>-<i>" for i from 0 gives four
// points, its four little-endian 32-bit words. Points are sorted by value;
// equal values keep the server order above, as glibc's (stable, merge
// sort) qsort leaves them, and the lookup finds the first of them; with
// another C library's qsort twemproxy may break such rare ties otherwise.
// Keys are hashed with the pool's hash (Config.KeyHash, default fnv1a_64)
// and go to the first point >= the hash, wrapping to the first point; an
// empty key hashes to 0.
//
// modula reproduces twemproxy's "distribution: modula": servers in the same
// order as for ketama, one slot per unit of weight, and a key goes to slot
// hash % total weight.
//
// The twemproxy key hashes are reproduced with their quirks: fnv1a_64 works
// in 32 bits (the low halves of the 64-bit offset basis and prime), crc16 is
// CRC-16/ARC with all 16 bits kept, crc32 is libmemcached's variant (bits
// 16..30 of the CRC-32), and because C's char is signed on x86-64, bytes >=
// 0x80 are sign-extended in one_at_a_time, fnv1_64, fnv1a_64, fnv1_32,
// fnv1a_32 and in the last byte of a 3-byte hsieh tail.
//
// # Validation
//
// New refuses, with errors wrapping the package's sentinels: an empty shard
// list (ErrNoShards); a weight <= 0, or a ketama weight too small to earn a
// single point (ErrBadWeight); an Addr that is not host:port with a port
// in 1..65535 written in plain decimal, as ParseShards writes it, since
// "h:06379" or "h:+6379" would be one server under a second name
// (ErrBadShard); two shards with the same Name or Label, two addresses of
// one server, or, for ketama and modula, the same continuum name
// (ErrDuplicateShard); more than
// MaxPoints points or slots (ErrTooManyPoints); an unknown algorithm
// (ErrUnknownAlgorithm), key hash (ErrUnknownHash) or tag rule (ErrBadTag);
// and, for ketama, a continuum name so long that "<name>-<i>" exceeds the 85
// bytes twemproxy hashes faithfully (ErrBadShard). Ring.Without, which
// takes shards out of a ring as twemproxy's auto_eject_hosts does, lets a
// ketama shard that the remaining weights leave without a point own no
// key instead.
//
// Two addresses are one server when they are the same text, or spell one
// IP address two ways ("[::1]:6379" and "[0::1]:6379", "10.0.0.1:6379" and
// "[::ffff:10.0.0.1]:6379"), or name localhost and a loopback address, or
// the unspecified address and the loopback address of its family
// ("0.0.0.0:6379" and "127.0.0.1:6379": a connection to the first goes to
// the second), or differ only in the case of a host name or a final dot,
// or in how they write an IPv6 zone ("[fe80::1%lo]" and "[fe80::1%1]"
// when lo is interface 1; a zone on an address that needs none, which a
// dial ignores: "[::1%lo]" and "[::1]"). Host names are
// not looked up: "redis-1:6379" and the address it resolves to pass as two
// shards, so name each server by one address everywhere. The check only
// refuses; what a ring hashes is still the address (or name) as written.
package ring
