package ring

import (
	"strconv"
	"testing"
)

// review6JedisKeys are the keys of TestReview6JedisReference: empty, tagged
// (with the Jedis pattern's quirks: "foo{}{bar}" hashes "}{bar", a line
// terminator ends a candidate tag), multi-byte UTF-8, and a key longer than
// several MurmurHash64A blocks.
var review6JedisKeys = []string{
	"", "a", "foo", "user:1000", "{user1000}.following", "foo{}{bar}", "é", "名前:{1}", "😀", "{}}",
	"x{y}z", "{a\nb}{c}", "abcdefghijklmnopqrstuvwxyz", "{\u2028}{d}", "ключ{😀}",
	"0123456789012345678901234567890123456789",
}

// TestReview6JedisReference checks jedis and jedis-legacy placement with
// weights above 1, named, unnamed and mixed shards, non-ASCII names, both
// key hashes and both tag rules against a reference the library's code had
// no part in: a Java program (javac 17) built from Jedis's own
// Sharded.initialize/getShardInfo (3.x naming "name*n", 2.x naming
// "name*" + weight + n), MurmurHash.hash64A with seed 0x1234ABCD,
// Hashing.MD5 and Sharded.DEFAULT_KEY_TAG_PATTERN, run on the keys as Java
// Strings. want[i] is the shard index of review6JedisKeys[i].
func TestReview6JedisReference(t *testing.T) {
	type shard struct {
		name   string
		weight int
	}
	scenarios := map[string]struct {
		alg    Algorithm
		hash   string
		shards []shard
	}{
		"unnamed":    {Jedis, "murmur", []shard{{"", 3}, {"", 1}, {"", 2}}},
		"named":      {Jedis, "murmur", []shard{{"alpha", 2}, {"beta", 1}, {"gamma", 5}}},
		"mixed":      {Jedis, "murmur", []shard{{"alpha", 1}, {"", 2}, {"шард", 1}, {"", 3}}},
		"legacy":     {JedisLegacy, "murmur", []shard{{"alpha", 2}, {"beta", 3}, {"", 2}}},
		"md5":        {Jedis, "md5", []shard{{"alpha", 2}, {"", 1}, {"名前", 3}}},
		"md5-legacy": {JedisLegacy, "md5", []shard{{"alpha", 4}, {"😀", 1}}},
	}
	tests := []struct{ scenario, tag, want string }{
		{"unnamed", "none", "2102022002212012"},
		{"unnamed", "jedis", "2102002100202002"},
		{"named", "none", "2022202221220220"},
		{"named", "jedis", "2022222222220220"},
		{"mixed", "none", "3133333113133311"},
		{"mixed", "jedis", "3133313111223111"},
		{"legacy", "none", "2112001011212110"},
		{"legacy", "jedis", "2112111111112110"},
		{"md5", "none", "0220221021122002"},
		{"md5", "jedis", "0220001022202222"},
		{"md5-legacy", "none", "0000000001000000"},
		{"md5-legacy", "jedis", "0000100000100000"},
	}
	for _, tc := range tests {
		sc, ok := scenarios[tc.scenario]
		if !ok {
			t.Fatalf("no scenario %q", tc.scenario)
		}
		var shards []Shard
		for i, s := range sc.shards {
			shards = append(shards, Shard{Name: s.name, Addr: "127.0.0.1:" + strconv.Itoa(7000+i), Weight: s.weight})
		}
		r, err := New(Config{Algorithm: sc.alg, KeyHash: sc.hash, Tag: tc.tag, Shards: shards})
		if err != nil {
			t.Fatalf("%s: %v", tc.scenario, err)
		}
		if len(tc.want) != len(review6JedisKeys) {
			t.Fatalf("%s %s: %d expected indexes for %d keys", tc.scenario, tc.tag, len(tc.want), len(review6JedisKeys))
		}
		for i, k := range review6JedisKeys {
			want := int(tc.want[i] - '0')
			if got := r.Locate(k); got != want {
				t.Errorf("%s tag %s: Locate(%q) = %d, Jedis says %d", tc.scenario, tc.tag, k, got, want)
			}
			if got := r.LocateBytes([]byte(k)); got != want {
				t.Errorf("%s tag %s: LocateBytes(%q) = %d, Jedis says %d", tc.scenario, tc.tag, k, got, want)
			}
		}
	}
}
