package bench

// murmurSeed is the seed of Jedis's Hashing.MURMUR_HASH.
const murmurSeed = 0x1234ABCD

// murmur64A returns Austin Appleby's MurmurHash64A of s with Jedis's seed,
// reading 8-byte blocks little-endian and a 1..7 byte tail zero-padded.
// It works on a string so that hashing a key never copies it.
func murmur64A(s string) uint64 {
	const (
		mul   = 0xc6a4a7935bd1e995
		shift = 47
	)
	h := uint64(murmurSeed) ^ uint64(len(s))*mul
	for ; len(s) >= 8; s = s[8:] {
		k := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		k *= mul
		k ^= k >> shift
		k *= mul
		h = (h ^ k) * mul
	}
	if len(s) > 0 {
		var k uint64
		for i := len(s) - 1; i >= 0; i-- {
			k = k<<8 | uint64(s[i])
		}
		h = (h ^ k) * mul
	}
	h ^= h >> shift
	h *= mul
	h ^= h >> shift
	return h
}
