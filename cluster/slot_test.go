package cluster

import (
	"bufio"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/shardis/shardis/hashtag"
)

// bitwiseCRC16 is the textbook CRC-16/XMODEM, one bit at a time: the
// reference the table-driven crc16 is checked against.
func bitwiseCRC16(data []byte) uint16 {
	var crc uint16
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func TestCRC16(t *testing.T) {
	for _, tt := range []struct {
		data string
		want uint16
	}{
		{"", 0},
		{"123456789", 0x31c3}, // the CRC-16/XMODEM check value
		{"\x00", 0},
		{"\x01", 0x1021},
		{"\xff", 0x1ef0},
	} {
		if got := CRC16([]byte(tt.data)); got != tt.want {
			t.Errorf("CRC16(%q) = %#04x, want %#04x", tt.data, got, tt.want)
		}
	}
}

// TestCRC16Lengths covers every length up to 64 so that both the eight-byte
// loop and the byte-at-a-time tail meet every remainder.
func TestCRC16Lengths(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 65 {
		for range 50 {
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			if got, want := CRC16(data), bitwiseCRC16(data); got != want {
				t.Fatalf("CRC16(%x) = %#04x, want %#04x", data, got, want)
			}
			if got, want := crc16(string(data)), bitwiseCRC16(data); got != want {
				t.Fatalf("crc16(string %x) = %#04x, want %#04x", data, got, want)
			}
		}
	}
}

func TestSlot(t *testing.T) {
	for _, tt := range []struct {
		key  string
		want int
	}{
		{"", 0},
		{"123456789", 12739},
		{"foo", 12182},
		{"bar", 5061},
		{"foo{bar}zap", 5061},   // the tag "bar" is hashed
		{"{bar}", 5061},         // same tag, same slot
		{"foo{}{bar}", 8363},    // empty first tag: the whole key
		{"foo{{bar}}zap", 4015}, // the tag is "{bar"
		{"{user1000}.following", 3443},
		{"{user1000}.followers", 3443},
		{"user1000", 3443},
	} {
		if got := Slot(tt.key); got != tt.want {
			t.Errorf("Slot(%q) = %d, want %d", tt.key, got, tt.want)
		}
		if got := SlotBytes([]byte(tt.key)); got != tt.want {
			t.Errorf("SlotBytes(%q) = %d, want %d", tt.key, got, tt.want)
		}
	}
	if got, want := Slot("{bar"), Slot("foo{{bar}}zap"); got != want {
		t.Errorf("Slot(\"{bar\") = %d but the key tagged \"{bar\" has slot %d", got, want)
	}
}

// TestSlotVectors checks every row of the slots a real Redis server
// returned for CLUSTER KEYSLOT.
func TestSlotVectors(t *testing.T) {
	f, err := os.Open("testdata/keyslot.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	rows, empty := 0, false
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) != 3 {
			t.Fatalf("keyslot.tsv:%d: %d fields, want 3", line, len(fields))
		}
		key, err := hex.DecodeString(fields[0])
		if err != nil {
			t.Fatalf("keyslot.tsv:%d: %v", line, err)
		}
		if got := escape(key); got != fields[1] {
			t.Fatalf("keyslot.tsv:%d: key_hex escapes to %q, file says %q", line, got, fields[1])
		}
		want, err := strconv.Atoi(fields[2])
		if err != nil {
			t.Fatalf("keyslot.tsv:%d: %v", line, err)
		}
		if got := Slot(string(key)); got != want {
			t.Errorf("keyslot.tsv:%d: Slot(%q) = %d, want %d", line, key, got, want)
		}
		if got := SlotBytes(key); got != want {
			t.Errorf("keyslot.tsv:%d: SlotBytes(%q) = %d, want %d", line, key, got, want)
		}
		rows++
		empty = empty || len(key) == 0
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rows < 300 || !empty {
		t.Fatalf("read %d rows (empty key seen: %v), want at least 300 including the empty key", rows, empty)
	}
}

// escape renders key as the key_escaped column of keyslot.tsv does.
func escape(key []byte) string {
	var b strings.Builder
	for _, c := range key {
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c >= 0x20 && c <= 0x7e:
			b.WriteByte(c)
		default:
			b.WriteString(`\x` + hex.EncodeToString([]byte{c}))
		}
	}
	return b.String()
}

func TestSlotAllocs(t *testing.T) {
	for _, key := range []string{"", "foo", "{user1000}.following", strings.Repeat("k", 1024)} {
		b := []byte(key)
		if n := testing.AllocsPerRun(100, func() { sinkSlot = Slot(key) }); n != 0 {
			t.Errorf("Slot(%.20q): %v allocs, want 0", key, n)
		}
		if n := testing.AllocsPerRun(100, func() { sinkSlot = SlotBytes(b) }); n != 0 {
			t.Errorf("SlotBytes(%.20q): %v allocs, want 0", key, n)
		}
		if n := testing.AllocsPerRun(100, func() { _ = CRC16(b) }); n != 0 {
			t.Errorf("CRC16(%.20q): %v allocs, want 0", key, n)
		}
	}
}

// FuzzSlot checks that Slot never panics, is deterministic, agrees with
// SlotBytes and with the bitwise CRC of the key's tag, and stays in range.
func FuzzSlot(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("123456789"))
	f.Add([]byte("foo{bar}zap"))
	f.Add([]byte("foo{}{bar}"))
	f.Add([]byte("foo{{bar}}zap"))
	f.Add([]byte("\xff{\x00}\n"))
	f.Fuzz(func(t *testing.T, key []byte) {
		s := SlotBytes(key)
		if s < 0 || s >= SlotCount {
			t.Fatalf("SlotBytes(%q) = %d, out of range", key, s)
		}
		if again := SlotBytes(key); again != s {
			t.Fatalf("SlotBytes(%q) gave %d then %d", key, s, again)
		}
		if str := Slot(string(key)); str != s {
			t.Fatalf("Slot(%q) = %d but SlotBytes = %d", key, str, s)
		}
		tag := hashtag.Cluster.TagBytes(key)
		if want := int(bitwiseCRC16(tag) & 0x3fff); s != want {
			t.Fatalf("SlotBytes(%q) = %d, bitwise CRC of tag %q gives %d", key, s, tag, want)
		}
		if ts := SlotBytes(tag); ts != s {
			t.Fatalf("SlotBytes(%q) = %d but its tag %q has slot %d", key, s, tag, ts)
		}
	})
}
