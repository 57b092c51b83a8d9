package ring

import (
	"errors"
	"strings"
	"testing"
)

// The duplicate-shard error quotes both shards' addresses as given. An
// address can carry credentials only pasted into it (a URL's userinfo),
// and New refuses such an address before it compares servers (its error
// quotes it redacted), whichever of the two shards carries it and
// whatever the algorithm: the password never reaches a duplicate-shard
// error.
func TestReview12DuplicateShardErrorNeverShowsAPassword(t *testing.T) {
	const pw = "dup-S3cret"
	for _, pair := range [][2]string{
		{"redis://u:" + pw + "@127.0.0.1:6379", "127.0.0.1:6379"},
		{"127.0.0.1:6379", "redis://u:" + pw + "@127.0.0.1:6379"},
		{"u:" + pw + "@127.0.0.1:6379", "u:" + pw + "@127.0.0.1:6379"},
		{"localhost:6379", ":" + pw + "@127.0.0.1:6379"},
	} {
		for _, alg := range []Algorithm{Murmur3, Jedis, JedisLegacy, Ketama, Modula} {
			_, err := New(Config{Algorithm: alg, Shards: []Shard{{Addr: pair[0], Weight: 1}, {Addr: pair[1], Weight: 1}}})
			if err == nil {
				t.Fatalf("%s %q: New accepted an address with credentials", alg, pair)
			}
			if strings.Contains(err.Error(), pw) {
				t.Errorf("%s %q: %q shows the password", alg, pair, err)
			}
			if !errors.Is(err, ErrBadShard) || errors.Is(err, ErrDuplicateShard) {
				t.Errorf("%s %q: %v, want ErrBadShard (credentials refused) before any duplicate check", alg, pair, err)
			}
		}
	}
}
