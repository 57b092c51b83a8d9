package bench

import (
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Rendezvous routes keys with rendezvous (highest random weight) hashing
// exactly as the Ring client of go-redis v9 does by default:
//
//   - the key is cut to its Redis Cluster hash tag (the part between the
//     first "{" and the next "}", when that part is not empty);
//   - the key is hashed once with xxhash (XXH64, seed 0);
//   - every shard's score is mix(keyHash ^ xxhash(shardName)), where mix is
//     a xorshift followed by a multiplication, and the shard names' hashes
//     are computed once by NewRendezvous;
//   - the highest score wins, the first shard on a tie.
//
// So a lookup costs one hash of the key plus one mix per shard: it grows
// linearly with the number of shards. go-redis also takes a read lock and
// looks the winning name up in a map on every key; Locate leaves those out
// and returns the index instead, which flatters the baseline a little.
//
// A Rendezvous is immutable and safe for concurrent use.
type Rendezvous struct {
	hashes []uint64
}

// NewRendezvous returns a router over the shards with the given names; Locate
// returns indexes into names. Names should be distinct: two equal names
// score the same, and the first of them always wins.
func NewRendezvous(names []string) *Rendezvous {
	r := &Rendezvous{hashes: make([]uint64, len(names))}
	for i, n := range names {
		r.hashes[i] = xxhash.Sum64String(n)
	}
	return r
}

// Locate returns the index of the shard that owns key, or -1 when the router
// has no shards.
func (r *Rendezvous) Locate(key string) int {
	if len(r.hashes) == 0 {
		return -1
	}
	kh := xxhash.Sum64String(clusterTag(key))
	best, bestScore := 0, mix64(kh^r.hashes[0])
	for i := 1; i < len(r.hashes); i++ {
		if s := mix64(kh ^ r.hashes[i]); s > bestScore {
			best, bestScore = i, s
		}
	}
	return best
}

// mix64 scrambles x: a xorshift step and a multiplication by an odd
// constant, the score function of go-redis's rendezvous hash.
func mix64(x uint64) uint64 {
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	return x * 2685821657736338717
}

// clusterTag returns the Redis Cluster hash tag of key: the bytes between the
// first '{' and the next '}' when there are any, else the whole key.
func clusterTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}
