package cluster

import "github.com/shardis/shardis/hashtag"

// SlotCount is the number of hash slots of a Redis Cluster. Slots are
// numbered from 0 to SlotCount-1.
const SlotCount = 16384

// Slot returns the hash slot of key, as the CLUSTER KEYSLOT command of a
// Redis server would: the CRC16 (see [CRC16]) of the key's hash tag
// ([hashtag.Cluster]), modulo [SlotCount]. It does not allocate.
func Slot(key string) int {
	return int(crc16(hashtag.Cluster.Tag(key)) & (SlotCount - 1))
}

// SlotBytes is [Slot] for a key held in a byte slice.
func SlotBytes(key []byte) int {
	return int(crc16(hashtag.Cluster.TagBytes(key)) & (SlotCount - 1))
}

// CRC16 returns the CRC-16/XMODEM checksum of data (polynomial 0x1021,
// initial value 0, no reflection, no final xor), the checksum Redis Cluster
// uses for keys. CRC16([]byte("123456789")) == 0x31C3.
func CRC16(data []byte) uint16 {
	return crc16(data)
}

// crcTables[0][b] is the checksum of the single byte b, and crcTables[k][b]
// that of b followed by k zero bytes. With one table, each byte waits for
// the lookup of the byte before it; with eight, eight bytes are looked up
// independently and xored together, which is several times faster on keys
// longer than a few bytes (see BenchmarkSlot16).
var crcTables = func() (t [8][256]uint16) {
	for b := range t[0] {
		crc := uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[0][b] = crc
	}
	for k := 1; k < len(t); k++ {
		for b := range t[k] {
			prev := t[k-1][b]
			t[k][b] = prev<<8 ^ t[0][prev>>8]
		}
	}
	return t
}()

func crc16[K string | []byte](data K) uint16 {
	var crc uint16
	for len(data) >= 8 {
		crc = crcTables[7][byte(crc>>8)^data[0]] ^
			crcTables[6][byte(crc)^data[1]] ^
			crcTables[5][data[2]] ^
			crcTables[4][data[3]] ^
			crcTables[3][data[4]] ^
			crcTables[2][data[5]] ^
			crcTables[1][data[6]] ^
			crcTables[0][data[7]]
		data = data[8:]
	}
	for i := 0; i < len(data); i++ {
		crc = crc<<8 ^ crcTables[0][byte(crc>>8)^data[i]]
	}
	return crc
}
