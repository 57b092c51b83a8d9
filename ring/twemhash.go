package ring

import (
	"crypto/md5"
	"hash/crc32"
	"math/bits"
)

// This file holds the key hash functions of twemproxy (nutcracker) pools,
// written to return exactly what twemproxy's C functions return on x86-64,
// where char is signed. Where the C code widens a plain char to 32 or 64
// bits, bytes >= 0x80 are sign-extended first (sx); the affected functions
// are one_at_a_time, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32 and the third
// trailing byte of hsieh. Every function returns a uint32.

// sx widens a byte the way C widens a signed char: 0x80..0xff become
// 0xffffff80..0xffffffff.
func sx(c byte) uint32 { return uint32(int32(int8(c))) }

// twemOneAtATime is Bob Jenkins's one-at-a-time hash over sign-extended bytes.
func twemOneAtATime(key []byte) uint32 {
	var h uint32
	for _, c := range key {
		h += sx(c)
		h += h << 10
		h ^= h >> 6
	}
	h += h << 3
	h ^= h >> 11
	h += h << 15
	return h
}

// twemMD5 is the first four MD5 digest bytes read little-endian.
func twemMD5(key []byte) uint32 {
	d := md5.Sum(key)
	return le32(d[:4])
}

// crc16Table is the byte table of the reflected CRC-16 with polynomial
// 0x8005 (0xA001 reflected), the "ARC" CRC.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xA001
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}()

// twemCRC16 is CRC-16/ARC (init 0, no final xor), all 16 bits of it.
func twemCRC16(key []byte) uint32 {
	var crc uint16
	for _, c := range key {
		crc = crc>>8 ^ crc16Table[byte(crc)^c]
	}
	return uint32(crc)
}

// twemCRC32 is libmemcached's variant: bits 16..30 of the standard CRC-32.
func twemCRC32(key []byte) uint32 {
	return crc32.ChecksumIEEE(key) >> 16 & 0x7fff
}

// twemCRC32a is the standard CRC-32 (IEEE).
func twemCRC32a(key []byte) uint32 {
	return crc32.ChecksumIEEE(key)
}

const (
	fnv64Offset = 0xcbf29ce484222325
	fnv64Prime  = 0x100000001b3
	fnv32Offset = 2166136261
	fnv32Prime  = 16777619
)

// twemFNV1_64 is 64-bit FNV-1 over sign-extended bytes, truncated to 32 bits.
func twemFNV1_64(key []byte) uint32 {
	h := uint64(fnv64Offset)
	for _, c := range key {
		h *= fnv64Prime
		h ^= uint64(int64(int8(c)))
	}
	return uint32(h)
}

// twemFNV1a_64 is what twemproxy calls fnv1a_64: FNV-1a computed in 32 bits
// with the low halves of the 64-bit offset basis and prime, over
// sign-extended bytes.
func twemFNV1a_64(key []byte) uint32 {
	h := uint32(fnv64Offset & 0xffffffff)
	for _, c := range key {
		h ^= sx(c)
		h *= uint32(fnv64Prime & 0xffffffff)
	}
	return h
}

// twemFNV1_32 is 32-bit FNV-1 over sign-extended bytes.
func twemFNV1_32(key []byte) uint32 {
	h := uint32(fnv32Offset)
	for _, c := range key {
		h *= fnv32Prime
		h ^= sx(c)
	}
	return h
}

// twemFNV1a_32 is 32-bit FNV-1a over sign-extended bytes.
func twemFNV1a_32(key []byte) uint32 {
	h := uint32(fnv32Offset)
	for _, c := range key {
		h ^= sx(c)
		h *= fnv32Prime
	}
	return h
}

// twemHsieh is Paul Hsieh's SuperFastHash. 16-bit reads are unsigned and
// little-endian; the odd third trailing byte is sign-extended as in the C
// code. The empty key hashes to 0.
func twemHsieh(key []byte) uint32 {
	if len(key) == 0 {
		return 0
	}
	get16 := func(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 }
	var h uint32
	rem := len(key) & 3
	for n := len(key) >> 2; n > 0; n-- {
		h += get16(key)
		tmp := get16(key[2:])<<11 ^ h
		h = h<<16 ^ tmp
		key = key[4:]
		h += h >> 11
	}
	switch rem {
	case 3:
		h += get16(key)
		h ^= h << 16
		h ^= sx(key[2]) << 18
		h += h >> 11
	case 2:
		h += get16(key)
		h ^= h << 11
		h += h >> 17
	case 1:
		h += uint32(key[0])
		h ^= h << 10
		h += h >> 1
	}
	h ^= h << 3
	h += h >> 5
	h ^= h << 4
	h += h >> 17
	h ^= h << 25
	h += h >> 6
	return h
}

// twemMurmur is MurmurHash2 (32-bit) as libmemcached and twemproxy seed it:
// seed = 0xdeadbeef * len, h = seed ^ len; blocks read little-endian.
func twemMurmur(key []byte) uint32 {
	const (
		m = 0x5bd1e995
		r = 24
	)
	n := uint32(len(key))
	h := 0xdeadbeef*n ^ n
	for len(key) >= 4 {
		k := le32(key)
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
		key = key[4:]
	}
	switch len(key) {
	case 3:
		h ^= uint32(key[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(key[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(key[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// twemJenkins is Bob Jenkins's lookup3 "hashlittle" with initval 13 over
// unsigned bytes read little-endian. The empty key returns the initial
// state without mixing, as the C code does.
func twemJenkins(key []byte) uint32 {
	a := 0xdeadbeef + uint32(len(key)) + 13
	b, c := a, a
	for len(key) > 12 {
		a += le32(key)
		b += le32(key[4:])
		c += le32(key[8:])
		a, b, c = lookup3Mix(a, b, c)
		key = key[12:]
	}
	if len(key) == 0 {
		return c
	}
	var tail [12]byte
	copy(tail[:], key)
	a += le32(tail[0:])
	b += le32(tail[4:])
	c += le32(tail[8:])
	return lookup3Final(a, b, c)
}

// lookup3Mix is lookup3's reversible mix of three 32-bit words.
func lookup3Mix(a, b, c uint32) (uint32, uint32, uint32) {
	a -= c
	a ^= bits.RotateLeft32(c, 4)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 6)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 8)
	b += a
	a -= c
	a ^= bits.RotateLeft32(c, 16)
	c += b
	b -= a
	b ^= bits.RotateLeft32(a, 19)
	a += c
	c -= b
	c ^= bits.RotateLeft32(b, 4)
	b += a
	return a, b, c
}

// lookup3Final is lookup3's final mixing of three words; it returns c.
func lookup3Final(a, b, c uint32) uint32 {
	c ^= b
	c -= bits.RotateLeft32(b, 14)
	a ^= c
	a -= bits.RotateLeft32(c, 11)
	b ^= a
	b -= bits.RotateLeft32(a, 25)
	c ^= b
	c -= bits.RotateLeft32(b, 16)
	a ^= c
	a -= bits.RotateLeft32(c, 4)
	b ^= a
	b -= bits.RotateLeft32(a, 14)
	c ^= b
	c -= bits.RotateLeft32(b, 24)
	return c
}
