package ring

import (
	"encoding/binary"
	"math/bits"
	"strconv"
)

// murmur3Labels writes to pos[j] the position of point first+j of a
// murmur3 shard, murmur3Sum64(prefix + decimal(first+j)), for j from 0 to
// len(pos)-1,
// without formatting or allocating anything per point: a ring of 1,000
// weighted shards has millions of points.
//
// MurmurHash3 consumes its input in 16-byte blocks, in order, so the
// state after the blocks that lie wholly inside the prefix is computed
// once; each point then hashes only what follows them, the rest of the
// prefix and the digits, which a counter keeps in a zero-padded buffer.
// Zero bytes past the input make the tail's mixing a no-op (a zero word
// multiplies and rotates to zero), so the tail is mixed as two whole
// words without looking at its length.
func murmur3Labels(pos []uint64, prefix string, first int) {
	const (
		c1 = 0x87c37b91114253d5
		c2 = 0x4cf5ad432745937f
	)
	var h1, h2 uint64
	p := bytesOf(prefix)
	full := len(p) &^ 15
	for b := 0; b < full; b += 16 {
		h1, h2 = murmur3Block(h1, h2, binary.LittleEndian.Uint64(p[b:]), binary.LittleEndian.Uint64(p[b+8:]))
	}
	// buf holds the prefix's last partial block (under 16 bytes), then the
	// digits of n (at most 8: n < MaxPoints); the rest stays zero. w holds
	// the same bytes as little-endian words, which the hashing reads: the
	// last digit, when it is not a 9, is counted up in w alone, since
	// reading a word back from memory right after a byte of it was
	// written stalls the processor. Every tenth point, buf counts the carry
	// and w is read again.
	var buf [32]byte
	var w [4]uint64
	rest := copy(buf[:], p[full:])
	end := len(strconv.AppendInt(buf[:rest], int64(first), 10)) // one past the last digit
	reload := func() {
		for i := range w {
			w[i] = binary.LittleEndian.Uint64(buf[8*i:])
		}
	}
	reload()
	for n := range pos {
		if n > 0 {
			last := end - 1
			if buf[last] != '9' {
				buf[last]++
				w[last>>3] += 1 << (8 * (last & 7))
			} else {
				// Add one to the decimal number in buf[rest:end].
				i := last
				for i >= rest && buf[i] == '9' {
					buf[i] = '0'
					i--
				}
				if i < rest { // 9...9 became 0...0: one more digit
					buf[rest] = '1'
					buf[end] = '0'
					end++
				} else {
					buf[i]++
				}
				reload()
			}
		}
		a1, a2, k1, k2 := h1, h2, w[0], w[1]
		if end >= 16 {
			a1, a2 = murmur3Block(a1, a2, k1, k2)
			k1, k2 = w[2], w[3]
		}
		k2 *= c2
		k2 = bits.RotateLeft64(k2, 33)
		k2 *= c1
		a2 ^= k2
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		a1 ^= k1
		length := uint64(full + end)
		a1 ^= length
		a2 ^= length
		a1 += a2
		a2 += a1
		a1 = fmix64(a1)
		a2 = fmix64(a2)
		pos[n] = a1 + a2
	}
}

// murmur3Block mixes one 16-byte block, as words k1 and k2, into the
// state of murmur3Sum64.
func murmur3Block(h1, h2, k1, k2 uint64) (uint64, uint64) {
	const (
		c1 = 0x87c37b91114253d5
		c2 = 0x4cf5ad432745937f
	)
	k1 *= c1
	k1 = bits.RotateLeft64(k1, 31)
	k1 *= c2
	h1 ^= k1
	h1 = bits.RotateLeft64(h1, 27)
	h1 += h2
	h1 = h1*5 + 0x52dce729

	k2 *= c2
	k2 = bits.RotateLeft64(k2, 33)
	k2 *= c1
	h2 ^= k2
	h2 = bits.RotateLeft64(h2, 31)
	h2 += h1
	h2 = h2*5 + 0x38495ab5
	return h1, h2
}
