package ring

import "crypto/md5"

// jedisSeed is the seed Jedis passes to MurmurHash64A (Hashing.MURMUR_HASH).
const jedisSeed = 0x1234ABCD

// murmur64A returns MurmurHash64A of key with the seed Jedis uses: 8-byte
// blocks read little-endian, 1..7 trailing bytes zero-padded and read
// little-endian. Jedis treats the result as a signed long; callers convert.
func murmur64A(key []byte) uint64 {
	const (
		m = 0xc6a4a7935bd1e995
		r = 47
	)
	n := len(key)
	h := uint64(jedisSeed) ^ uint64(n)*m
	for len(key) >= 8 {
		k := le64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if len(key) > 0 {
		var k uint64
		for i, c := range key {
			k |= uint64(c) << (8 * i)
		}
		h ^= k
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// jedisMD5 returns Jedis's Hashing.MD5 of key: the first four digest bytes
// read little-endian as an unsigned 32-bit number (a non-negative long).
func jedisMD5(key []byte) uint64 {
	d := md5.Sum(key)
	return uint64(le32(d[:4]))
}

// le64 reads the first 8 bytes of b little-endian.
func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// le32 reads the first 4 bytes of b little-endian.
func le32(b []byte) uint32 {
	_ = b[3]
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
