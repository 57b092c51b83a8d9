package shard

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
)

// FuzzHeldSlots: parseHeldSlots reads any CLUSTER NODES text without
// panicking and gives only slots in 0..16383; a "myself" line built from
// ranges, single slots and migration markers gives back exactly the
// slots served and imported.
func FuzzHeldSlots(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0x3f, 0xff}, "")
	f.Add([]byte{1, 5, 0, 0, 0, 2, 7, 0, 0, 0, 3, 9, 0, 0, 0}, "aaa 127.0.0.1:7001@17001 master - 0 1 2 connected 0-16383\n")
	f.Add([]byte{}, "bbb :7000@17000 myself,master - 0 0 1 connected 5-3\n")
	f.Fuzz(func(t *testing.T, spec []byte, text string) {
		if held, ok := parseHeldSlots(text); ok {
			for s := range held {
				if s < 0 || s >= 16384 {
					t.Fatalf("%q: slot %d", text, s)
				}
			}
		}
		// Each 5 bytes of spec: a kind and two slots.
		want := map[int]bool{}
		words := []string{"0123456789abcdef0123456789abcdef01234567", "127.0.0.1:7000@17000", "myself,master", "-", "0", "0", "1", "connected"}
		for i := 0; i+5 <= len(spec); i += 5 {
			a := int(binary.BigEndian.Uint16(spec[i+1:]) % 16384)
			b := int(binary.BigEndian.Uint16(spec[i+3:]) % 16384)
			switch spec[i] % 4 {
			case 0: // a range
				a, b = min(a, b), max(a, b)
				words = append(words, strconv.Itoa(a)+"-"+strconv.Itoa(b))
				for s := a; s <= b; s++ {
					want[s] = true
				}
			case 1: // one slot
				words = append(words, strconv.Itoa(a))
				want[a] = true
			case 2: // importing
				words = append(words, "["+strconv.Itoa(a)+"-<-fedcba9876543210fedcba9876543210fedcba98]")
				want[a] = true
			default: // migrating: listed as served already
				words = append(words, "["+strconv.Itoa(a)+"->-fedcba9876543210fedcba9876543210fedcba98]")
			}
		}
		other := "1111111111111111111111111111111111111111 127.0.0.1:7001@17001 master - 0 0 2 connected 0-16383"
		nodes := other + "\n" + strings.Join(words, " ") + "\n"
		held, ok := parseHeldSlots(nodes)
		if !ok {
			t.Fatalf("%q: not read", nodes)
		}
		if len(held) != len(want) {
			t.Fatalf("%q: %d slots, want %d", nodes, len(held), len(want))
		}
		for s := range want {
			if !held[s] {
				t.Fatalf("%q: slot %d missing", nodes, s)
			}
		}
	})
}
