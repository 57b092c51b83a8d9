package ring

import (
	"crypto/md5"
	"encoding/binary"
	"hash/crc32"
	"strconv"
	"testing"
)

// libmemcachedKeys and the tables below are the published check values of
// libmemcached's hash test table (tests/hash_results.h), whose hashkit
// functions twemproxy's are derived from. The keys are plain ASCII, so the
// sign-extension quirk does not show here; see TestTwemproxySignExtension.
var libmemcachedKeys = []string{
	"apple", "beat", "carrot", "daikon", "eggplant", "flower", "green", "hide",
	"ick", "jack", "kick", "lime", "mushrooms", "nectarine", "orange", "peach",
	"quant", "ripen", "strawberry", "tang", "up", "volumne", "when", "yellow", "zip",
}

var libmemcachedValues = map[string][]uint32{
	"one_at_a_time": {2297466611, 3902465932, 469785835, 1937308741, 261917617, 3785641677, 1439605128, 1649152283,
		1493851484, 1246520657, 2221159044, 1973511823, 384136800, 214358653, 2379473940, 4269788650,
		2864377005, 2638630052, 427683330, 990491717, 1747111141, 792127364, 2599214128, 2553037199, 2509838425},
	"md5": {3195025439, 2556848621, 3724893440, 3332385401, 245758794, 2550894432, 121710495, 3053817768,
		1250994555, 1862072655, 2631955953, 2951528551, 1451250070, 2820856945, 2060845566, 3646985608,
		2138080750, 217675895, 2230934345, 1234361223, 3968582726, 2455685270, 1293568479, 199067604, 2042482093},
	"crc32": {10542, 22009, 14526, 19510, 19432, 10199, 20634, 9369, 11511, 10362, 7893, 31289, 11313,
		9354, 7621, 30628, 15218, 25967, 2695, 9380, 17300, 28156, 9192, 20484, 16925},
	"fnv1_64": {473199127, 4148981457, 3971873300, 3257986707, 1722477987, 2991193800, 4147007314, 3633179701,
		1805162104, 3503289120, 3395702895, 3325073042, 2345265314, 3340346032, 2722964135, 1173398992,
		2815549194, 2562818319, 224996066, 2680194749, 3035305390, 246890365, 2395624193, 4145193337, 1801941682},
	"fnv1a_64": {1488911807, 2500855813, 1510099634, 1390325195, 3647689787, 3241528582, 1669328060, 2604311949,
		734810122, 1516407546, 560948863, 1767346780, 561034892, 4156330026, 3716417003, 3475297030,
		1518272172, 227211583, 3938128828, 126112909, 3043416448, 3131561933, 1328739897, 2455664041, 2272238452},
	"fnv1_32": {67176023, 1190179409, 2043204404, 3221866419, 2567703427, 3787535528, 4147287986, 3500475733,
		344481048, 3865235296, 2181839183, 119581266, 510234242, 4248244304, 1362796839, 103389328,
		1449620010, 182962511, 3554262370, 3206747549, 1551306158, 4127558461, 1889140833, 2774173721, 1180552018},
	"fnv1a_32": {280767167, 2421315013, 3072375666, 855001899, 459261019, 3521085446, 18738364, 1625305005,
		2162232970, 777243802, 3323728671, 132336572, 3654473228, 260679466, 1169454059, 2698319462,
		1062177260, 235516991, 2218399068, 405302637, 1128467232, 3579622413, 2138539289, 96429129, 2877453236},
	"hsieh": {3738850110, 3636226060, 3821074029, 3489929160, 3485772682, 80540287, 1805464076, 1895033657,
		409795758, 979934958, 3634096985, 1284445480, 2265380744, 707972988, 353823508, 1549198350,
		1327930172, 9304163, 4220749037, 2493964934, 2777873870, 2057831732, 1510213931, 2027828987, 3395453351},
	"murmur": {4142305122, 734504955, 3802834688, 4076891445, 387802650, 560515427, 3274673488, 3150339524,
		1527441970, 2728642900, 3613992239, 2938419259, 2321988328, 1145154116, 4038540960, 2224541613,
		264013145, 3995512858, 2400956718, 2346666219, 926327338, 442757446, 1770805201, 560483147, 3902279934},
	"jenkins": {1442444624, 4253821186, 1885058256, 2120131735, 3261968576, 3515188778, 4232909173, 4288625128,
		1812047395, 3689182164, 2502979932, 1214050606, 2415988847, 1494268927, 1025545760, 3920481083,
		4153263658, 3824871822, 3072759809, 798622255, 3065432577, 1453328165, 2691550971, 3408888387, 2629893356},
}

func TestTwemproxyHashesLibmemcachedValues(t *testing.T) {
	for name, want := range libmemcachedValues {
		t.Run(name, func(t *testing.T) {
			kh, ok := twemHashes[name]
			if !ok {
				t.Fatalf("hash %q not offered", name)
			}
			for i, k := range libmemcachedKeys {
				if got := kh.twem([]byte(k)); got != want[i] {
					t.Errorf("%s(%q) = %d, want %d", name, k, got, want[i])
				}
			}
		})
	}
}

func TestTwemproxyHashCheckValues(t *testing.T) {
	check := []byte("123456789")
	tests := []struct {
		name string
		key  []byte
		want uint32
	}{
		{"crc32a", check, 0xCBF43926},               // CRC-32 (IEEE) check value
		{"crc32", check, 0xCBF43926 >> 16 & 0x7fff}, // libmemcached variant of the same CRC
		{"crc16", check, 0xBB3D},                    // CRC-16/ARC check value, not masked to 14 bits
		{"crc16", []byte("a"), 0xE8C1},              // CRC-16/ARC("a")
		{"fnv1a_32", []byte("a"), 0xe40c292c},       // published FNV-1a 32 of "a"
		{"fnv1_32", []byte("a"), 0x050c5d7e},        // published FNV-1 32 of "a"
		{"fnv1_64", []byte("a"), 0x8601b7be},        // low half of FNV-1 64 "a" = 0xaf63bd4c8601b7be
		{"fnv1a_64", []byte("a"), 0x8601ec8c},       // low half of FNV-1a 64 "a" = 0xaf63dc4c8601ec8c
		{"fnv1a_32", nil, 2166136261},               // empty input: the offset basis
		{"fnv1a_64", []byte("cat"), 216310567},      // twitter util's libmemcached-compatible value
		{"fnv1_64", []byte("cat"), 1806270427},
		{"fnv1_32", []byte("cat"), 983016379},
		{"fnv1a_32", []byte("cat"), 108289031},
		{"hsieh", []byte("cat"), 3927732514},
		{"hsieh", nil, 0},
		{"one_at_a_time", []byte("a"), 0xca2e9442}, // published one-at-a-time of "a"
		{"jenkins", nil, 0xdeadbeef + 13},          // lookup3 returns c unmixed for no input
		{"md5", nil, 0xd98c1dd4},                   // d41d8cd9... read little-endian
		{"murmur", nil, 0},                         // seed 0, no blocks: the final mix of 0
	}
	for _, tc := range tests {
		if got := twemHashes[tc.name].twem(tc.key); got != tc.want {
			t.Errorf("%s(%q) = %#x, want %#x", tc.name, tc.key, got, tc.want)
		}
	}
}

// TestTwemproxySignExtension pins the signed-char quirk: twemproxy widens
// key bytes >= 0x80 as negative chars in some functions and not in others.
func TestTwemproxySignExtension(t *testing.T) {
	const b = 0x80
	neg := uint32(0xffffff80) // (uint32_t)(char)0x80 on x86-64

	oaat := func(v uint32) uint32 {
		h := v
		h += h << 10
		h ^= h >> 6
		h += h << 3
		h ^= h >> 11
		h += h << 15
		return h
	}
	var off32, prime32 uint32 = 2166136261, 16777619
	var off64, prime64 uint64 = 0xcbf29ce484222325, 0x100000001b3
	tests := []struct {
		name           string
		signed, masked uint32 // the value with sign extension, and without
	}{
		{"one_at_a_time", oaat(neg), oaat(b)},
		{"fnv1_32", off32*prime32 ^ neg, off32*prime32 ^ b},
		{"fnv1a_32", (off32 ^ neg) * prime32, (off32 ^ b) * prime32},
		{"fnv1_64", uint32(off64*prime64 ^ 0xffffffffffffff80), uint32(off64*prime64 ^ b)},
		{"fnv1a_64", (uint32(off64) ^ neg) * uint32(prime64), (uint32(off64) ^ b) * uint32(prime64)},
	}
	for _, tc := range tests {
		if tc.signed == tc.masked {
			t.Fatalf("%s: test values do not tell the variants apart", tc.name)
		}
		if got := twemHashes[tc.name].twem([]byte{b}); got != tc.signed {
			t.Errorf("%s(0x80) = %#x, want the sign-extended %#x (not %#x)", tc.name, got, tc.signed, tc.masked)
		}
	}

	// hsieh sign-extends only the third byte of a 3-byte tail.
	hsiehTail3 := func(b0, b1 byte, third uint32) uint32 {
		h := uint32(b0) | uint32(b1)<<8
		h ^= h << 16
		h ^= third << 18
		h += h >> 11
		h ^= h << 3
		h += h >> 5
		h ^= h << 4
		h += h >> 17
		h ^= h << 25
		h += h >> 6
		return h
	}
	if got, want := twemHsieh([]byte{'a', 'b', 0x80}), hsiehTail3('a', 'b', neg); got != want {
		t.Errorf("hsieh(ab\\x80) = %#x, want sign-extended %#x (unsigned would be %#x)", got, want, hsiehTail3('a', 'b', b))
	}
	if got, want := twemHsieh([]byte{0x80, 0x81, 'c'}), hsiehTail3(0x80, 0x81, 'c'); got != want {
		t.Errorf("hsieh(\\x80\\x81c) = %#x, want %#x (16-bit reads are unsigned)", got, want)
	}

	// The CRCs, md5, murmur and jenkins read unsigned bytes: a high byte
	// behaves as in the standard algorithms.
	hi := []byte{0x80, 0xff, 0xc3, 0xa9}
	if got, want := twemCRC32a(hi), crc32.ChecksumIEEE(hi); got != want {
		t.Errorf("crc32a high bytes = %#x, want %#x", got, want)
	}
	d := md5.Sum(hi)
	if got, want := twemMD5(hi), binary.LittleEndian.Uint32(d[:4]); got != want {
		t.Errorf("md5 high bytes = %#x, want %#x", got, want)
	}
	// jenkins on 4 bytes: mixing only in the final step, on unsigned words.
	a := 0xdeadbeef + uint32(4) + 13
	if got, want := twemJenkins(hi), lookup3Final(a+binary.LittleEndian.Uint32(hi), a, a); got != want {
		t.Errorf("jenkins high bytes = %#x, want %#x", got, want)
	}
}

func TestTwemproxyEmptyKeyHashesToZero(t *testing.T) {
	for name, kh := range twemHashes {
		if got := kh.position(nil); got != 0 {
			t.Errorf("%s: empty key position %d, want 0", name, got)
		}
	}
}

func TestJedisMD5(t *testing.T) {
	// Jedis's Hashing.MD5 takes the first four digest bytes little-endian,
	// as twemproxy's hash_md5 does: its reference vectors pin both.
	v := readVectors(t, "hash_md5.tsv")
	if len(v.rows) < 50 {
		t.Fatalf("%d rows", len(v.rows))
	}
	for i, row := range v.rows {
		key := unhex(t, row[0])
		want, err := strconv.ParseUint(row[2], 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		if got := jedisMD5(key); got != want {
			t.Errorf("row %d: jedisMD5(%s) = %d, want %d", i, row[1], got, want)
		}
		if got := khJedisMD5.position(key); got != want^signBit {
			t.Errorf("row %d: position(%s) = %#x, want %#x", i, row[1], got, want^signBit)
		}
	}
	// And the virtual node name of Jedis's first unnamed shard.
	if got := jedisMD5([]byte("SHARD-0-NODE-0")); got != 4193559948 {
		t.Errorf("jedisMD5(SHARD-0-NODE-0) = %d, want 4193559948", got)
	}
}
