package bench

import "github.com/cespare/xxhash/v2"

// RendezvousPerShard is rendezvous hashing as the routing-core issue words
// it: every shard scores xxhash(shardName + key), with the key cut to its
// Redis Cluster hash tag, and the highest score wins (the first shard on a
// tie). It hashes the key once per shard, where go-redis's Ring (see
// Rendezvous) hashes it once and mixes the result with each shard's
// precomputed hash; both are reported so that either reading of "a router
// equivalent to go-redis Ring's" can be checked.
//
// A RendezvousPerShard is immutable and safe for concurrent use.
type RendezvousPerShard struct {
	names []string
}

// NewRendezvousPerShard returns a router over the shards with the given
// names; Locate returns indexes into names.
func NewRendezvousPerShard(names []string) *RendezvousPerShard {
	return &RendezvousPerShard{names: append([]string(nil), names...)}
}

// Locate returns the index of the shard that owns key, or -1 when the router
// has no shards. It does not allocate.
func (r *RendezvousPerShard) Locate(key string) int {
	tag := clusterTag(key)
	best, bestScore := -1, uint64(0)
	// name + tag is built in a stack buffer and hashed in one call, the
	// fastest way to hash a concatenation with xxhash; only names and tags
	// too long for it go through a streaming digest.
	var buf [256]byte
	var d xxhash.Digest
	for i, n := range r.names {
		var s uint64
		if len(n)+len(tag) <= len(buf) {
			b := append(append(buf[:0], n...), tag...)
			s = xxhash.Sum64(b)
		} else {
			d.Reset()
			_, _ = d.WriteString(n)
			_, _ = d.WriteString(tag)
			s = d.Sum64()
		}
		if best < 0 || s > bestScore {
			best, bestScore = i, s
		}
	}
	return best
}
