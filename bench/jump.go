package bench

import "github.com/cespare/xxhash/v2"

// Jump returns the bucket, in [0, n), of key under Lamping and Veach's jump
// consistent hash ("A Fast, Minimal Memory, Consistent Hash Algorithm",
// 2014), fed with the 64-bit xxhash (XXH64, seed 0) of the whole key. Growing
// from n to n+1 buckets moves about 1/(n+1) of the keys, all of them to the
// new bucket. It returns -1 when n <= 0.
//
// Jump needs no table, but buckets can only be added or removed at the end,
// and shards cannot have names or weights.
func Jump(key string, n int) int {
	if n <= 0 {
		return -1
	}
	return jumpHash(xxhash.Sum64String(key), n)
}

// jumpHash is the jump consistent hash of a 64-bit key over n > 0 buckets:
// a linear congruential generator decides, bucket count after bucket count,
// where the key jumps next, and the last jump below n is its bucket.
func jumpHash(h uint64, n int) int {
	b, j := int64(-1), int64(0)
	for j < int64(n) {
		b = j
		h = h*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((h>>33)+1)))
	}
	return int(b)
}
