package ring

import (
	"testing"
)

// review6TwemKeys are the keys of TestReview6TwemproxyReference: empty,
// tagged ("{}" and "$$"), multi-byte UTF-8, bytes >= 0x80 (sign-extended
// by some twemproxy hashes) and a key longer than every hash block.
var review6TwemKeys = []string{
	"",
	"a",
	"foo",
	"user:1000",
	"{user1000}.following",
	"foo{}{bar}",
	"\xc3\xa9",
	"\xe5\x90\x8d\xe5\x89\x8d:{1}",
	"\xf0\x9f\x98\x80",
	"$a$b",
	"x{y}z",
	"{ab}",
	"abcdefghijklmnopqrstuvwxyz",
	"\x80\xff",
	"k\x00\xfe{\x81}",
	"0123456789012345678901234567890123456789",
}

// review6TwemLists are the pools, in twemproxy's "host:port:weight [name]"
// syntax: unnamed servers, a port-11211 server (continuum name without the
// port), weights far apart, and names whose order by length differs from
// their bytewise order.
var review6TwemLists = map[string]string{
	"mixed":    "127.0.0.1:6379:1,127.0.0.1:6380:2,127.0.0.1:6381:3 cache-c,10.0.0.1:11211:1",
	"weights":  "h1:7001:1 a,h2:7002:100 bb,h3:7003:7 c,h4:7004:13 dddd",
	"lenorder": "h1:7001:1 server-10,h2:7002:1 server-9,h3:7003:1 server-100,h4:7004:2 z,h5:7005:1 server-1",
}

// TestReview6TwemproxyReference checks ketama and modula placement with
// weights, names, hash tags and six key hashes against a reference the
// library's code had no part in: a C program built from twemproxy's own
// code (conf_add_server's continuum names, conf_server_name_cmp's server
// order, ketama_update with its float arithmetic and qsort, ketama_dispatch,
// modula_update/modula_dispatch, server_pool_idx's hash_tag and empty-key
// rules, and the hashkit functions, with OpenSSL's MD5), compiled by gcc
// on x86-64. want[i] is the index, in the list above, of the server of
// review6TwemKeys[i].
func TestReview6TwemproxyReference(t *testing.T) {
	tests := []struct{ list, dist, hash, tag, want string }{
		{"mixed", "ketama", "fnv1a_64", "none", "2122202122210120"},
		{"mixed", "ketama", "fnv1a_64", "{}", "2122202122110120"},
		{"mixed", "ketama", "md5", "none", "2211023021121200"},
		{"mixed", "ketama", "md5", "{}", "2211023221221220"},
		{"mixed", "ketama", "murmur", "none", "2321202213220110"},
		{"mixed", "ketama", "murmur", "{}", "2321302113100120"},
		{"mixed", "ketama", "hsieh", "none", "2222111212231101"},
		{"mixed", "ketama", "hsieh", "{}", "2222111012021121"},
		{"mixed", "ketama", "one_at_a_time", "none", "2121321132221100"},
		{"mixed", "ketama", "one_at_a_time", "{}", "2121021232231120"},
		{"mixed", "ketama", "crc32a", "none", "2131210132212122"},
		{"mixed", "ketama", "crc32a", "{}", "2131010132212122"},
		{"mixed", "modula", "fnv1a_64", "none", "2222100320323112"},
		{"mixed", "modula", "fnv1a_64", "{}", "2222100320103112"},
		{"mixed", "modula", "md5", "none", "2112132111321323"},
		{"mixed", "modula", "md5", "{}", "2112032211211323"},
		{"mixed", "modula", "murmur", "none", "2103020213231112"},
		{"mixed", "modula", "murmur", "{}", "2103220113221102"},
		{"mixed", "modula", "hsieh", "none", "2222121211121122"},
		{"mixed", "modula", "hsieh", "{}", "2222021011211112"},
		{"mixed", "modula", "one_at_a_time", "none", "2232100012212123"},
		{"mixed", "modula", "one_at_a_time", "{}", "2232300112022113"},
		{"mixed", "modula", "crc32a", "none", "2023120211001323"},
		{"mixed", "modula", "crc32a", "{}", "2023220211211323"},
		{"weights", "ketama", "fnv1a_64", "none", "1111111111113331"},
		{"weights", "ketama", "fnv1a_64", "{}", "1111111111133321"},
		{"weights", "ketama", "md5", "none", "1131121111111111"},
		{"weights", "ketama", "md5", "{}", "1131121111111111"},
		{"weights", "ketama", "murmur", "none", "1131111131111113"},
		{"weights", "ketama", "murmur", "{}", "1131111131321113"},
		{"weights", "ketama", "hsieh", "none", "1111111121113111"},
		{"weights", "ketama", "hsieh", "{}", "1111311121113111"},
		{"weights", "ketama", "one_at_a_time", "none", "1313111111133131"},
		{"weights", "ketama", "one_at_a_time", "{}", "1313111111113131"},
		{"weights", "ketama", "crc32a", "none", "1111111311112211"},
		{"weights", "ketama", "crc32a", "{}", "1111311111112211"},
		{"weights", "modula", "fnv1a_64", "none", "0313213111111111"},
		{"weights", "modula", "fnv1a_64", "{}", "0313113111131111"},
		{"weights", "modula", "md5", "none", "0111131311111111"},
		{"weights", "modula", "md5", "{}", "0111131111111111"},
		{"weights", "modula", "murmur", "none", "0111211111111111"},
		{"weights", "modula", "murmur", "{}", "0111211111121111"},
		{"weights", "modula", "hsieh", "none", "0211111111131331"},
		{"weights", "modula", "hsieh", "{}", "0211211111111331"},
		{"weights", "modula", "one_at_a_time", "none", "0111111111111111"},
		{"weights", "modula", "one_at_a_time", "{}", "0111111111111111"},
		{"weights", "modula", "crc32a", "none", "0111111111111131"},
		{"weights", "modula", "crc32a", "{}", "0111111111111111"},
		{"lenorder", "ketama", "fnv1a_64", "none", "1411334121022333"},
		{"lenorder", "ketama", "fnv1a_64", "{}", "1411334421402343"},
		{"lenorder", "ketama", "md5", "none", "1304004333412102"},
		{"lenorder", "ketama", "md5", "{}", "1304004233222122"},
		{"lenorder", "ketama", "murmur", "none", "1210400402443142"},
		{"lenorder", "ketama", "murmur", "{}", "1210200002133112"},
		{"lenorder", "ketama", "hsieh", "none", "1130302422220400"},
		{"lenorder", "ketama", "hsieh", "{}", "1130102422240410"},
		{"lenorder", "ketama", "one_at_a_time", "none", "1130013444233343"},
		{"lenorder", "ketama", "one_at_a_time", "{}", "1130113144143333"},
		{"lenorder", "ketama", "crc32a", "none", "1331303121220104"},
		{"lenorder", "ketama", "crc32a", "{}", "1331003021330134"},
		{"lenorder", "modula", "fnv1a_64", "none", "3022303244304032"},
		{"lenorder", "modula", "fnv1a_64", "{}", "3022103044004032"},
		{"lenorder", "modula", "md5", "none", "3301230144001322"},
		{"lenorder", "modula", "md5", "{}", "3301230044341332"},
		{"lenorder", "modula", "murmur", "none", "3322203303444144"},
		{"lenorder", "modula", "murmur", "{}", "3322203403334104"},
		{"lenorder", "modula", "hsieh", "none", "3222311032031333"},
		{"lenorder", "modula", "hsieh", "{}", "3222411332321333"},
		{"lenorder", "modula", "one_at_a_time", "none", "3312304244424323"},
		{"lenorder", "modula", "one_at_a_time", "{}", "3312304144034303"},
		{"lenorder", "modula", "crc32a", "none", "3121334304441141"},
		{"lenorder", "modula", "crc32a", "{}", "3121334204321131"},
	}
	if len(tests) == 0 {
		t.Fatal("no cases")
	}
	for _, tc := range tests {
		shards, err := ParseShards(review6TwemLists[tc.list])
		if err != nil {
			t.Fatal(err)
		}
		r, err := New(Config{Algorithm: Algorithm(tc.dist), KeyHash: tc.hash, Tag: tc.tag, Shards: shards})
		if err != nil {
			t.Fatalf("%s %s %s %s: %v", tc.list, tc.dist, tc.hash, tc.tag, err)
		}
		if len(tc.want) != len(review6TwemKeys) {
			t.Fatalf("%s %s %s %s: %d expected indexes for %d keys", tc.list, tc.dist, tc.hash, tc.tag, len(tc.want), len(review6TwemKeys))
		}
		for i, k := range review6TwemKeys {
			want := int(tc.want[i] - '0')
			if got := r.LocateBytes([]byte(k)); got != want {
				t.Errorf("%s %s %s tag %s: key %q on shard %d, twemproxy says %d", tc.list, tc.dist, tc.hash, tc.tag, k, got, want)
			}
			if got := r.Locate(k); got != want {
				t.Errorf("%s %s %s tag %s: Locate(%q) = %d, twemproxy says %d", tc.list, tc.dist, tc.hash, tc.tag, k, got, want)
			}
		}
	}
}
