package ring

import (
	"unsafe"
)

// keyHash identifies the function that turns a (tag-extracted) key into a
// ring position.
type keyHash uint8

const (
	khNone keyHash = iota
	khMurmur3
	khJedisMurmur
	khJedisMD5
	khOneAtATime
	khMD5
	khCRC16
	khCRC32
	khCRC32a
	khFNV1_64
	khFNV1a_64
	khFNV1_32
	khFNV1a_32
	khHsieh
	khMurmur
	khJenkins
)

// Key hash names accepted in Config.KeyHash, per algorithm family.
var (
	murmur3Hashes = map[string]keyHash{"murmur3": khMurmur3}
	jedisHashes   = map[string]keyHash{"murmur": khJedisMurmur, "md5": khJedisMD5}
	twemHashes    = map[string]keyHash{
		"one_at_a_time": khOneAtATime,
		"md5":           khMD5,
		"crc16":         khCRC16,
		"crc32":         khCRC32,
		"crc32a":        khCRC32a,
		"fnv1_64":       khFNV1_64,
		"fnv1a_64":      khFNV1a_64,
		"fnv1_32":       khFNV1_32,
		"fnv1a_32":      khFNV1a_32,
		"hsieh":         khHsieh,
		"murmur":        khMurmur,
		"jenkins":       khJenkins,
	}
)

// signBit flips a signed 64-bit value into an unsigned one with the same
// order, so that one unsigned binary search serves Jedis's signed order.
const signBit = 1 << 63

// bytesOf returns the bytes of s without copying. The hash functions only
// read their input, so the view is never written to.
func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// position returns the ring position of a key that has already been through
// tag extraction. Positions of every algorithm compare as uint64.
func (kh keyHash) position(key []byte) uint64 {
	switch kh {
	case khMurmur3:
		return murmur3Sum64(key)
	case khJedisMurmur:
		return murmur64A(key) ^ signBit
	case khJedisMD5:
		return jedisMD5(key) ^ signBit
	}
	// twemproxy never hashes an empty key: it sends it to hash 0.
	if len(key) == 0 {
		return 0
	}
	return uint64(kh.twem(key))
}

// twem returns the twemproxy hash kh of key.
func (kh keyHash) twem(key []byte) uint32 {
	switch kh {
	case khOneAtATime:
		return twemOneAtATime(key)
	case khMD5:
		return twemMD5(key)
	case khCRC16:
		return twemCRC16(key)
	case khCRC32:
		return twemCRC32(key)
	case khCRC32a:
		return twemCRC32a(key)
	case khFNV1_64:
		return twemFNV1_64(key)
	case khFNV1a_64:
		return twemFNV1a_64(key)
	case khFNV1_32:
		return twemFNV1_32(key)
	case khFNV1a_32:
		return twemFNV1a_32(key)
	case khHsieh:
		return twemHsieh(key)
	case khMurmur:
		return twemMurmur(key)
	case khJenkins:
		return twemJenkins(key)
	}
	return 0 // unreachable: New accepts only the hashes above
}

// keySpace returns the range of positions key hashes can take, as the first
// position and the number of positions (0 meaning 2^64). Diff assumes keys
// spread evenly over this range.
func (kh keyHash) keySpace() (lo, span uint64) {
	switch kh {
	case khMurmur3, khJedisMurmur:
		return 0, 0
	case khJedisMD5:
		return signBit, 1 << 32
	case khCRC16:
		return 0, 1 << 16
	case khCRC32:
		return 0, 1 << 15
	}
	return 0, 1 << 32
}
