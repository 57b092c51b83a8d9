package shard

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// TestReview13URLFromOptionsNotEncoded writes the from option's URL with
// options of its own without percent-encoding it: every option after the
// first '&' was read as the outer URL's, so the old ring's names or hash
// silently became the new ring's, and the migration looked for every key
// on the wrong node. Such a URL is refused, without quoting it (the from
// URL may hold a password); an encoded from URL, or an unencoded one that
// comes last, reads as before.
func TestReview13URLFromOptionsNotEncoded(t *testing.T) {
	const newRing = "redis-ring://127.0.0.1:7003,127.0.0.1:7004"
	for _, raw := range []string{
		newRing + "?from=redis-ring://127.0.0.1:7001,127.0.0.1:7002?hash=ketama&names=a,b",
		newRing + "?from=redis-ring://127.0.0.1:7001,127.0.0.1:7002?names=a,b&hash=ketama",
		"redis-ring://:pw-From-55e1@127.0.0.1:7003?db=1&from=redis-ring://:pw-From-55e1@127.0.0.1:7001,127.0.0.1:7002?db=1&hash=ketama",
		newRing + "?from=redis-ring://:pw-From-55e1@127.0.0.1:7001,127.0.0.1:7002?db=1&hash=ketama",
	} {
		cfg, err := ParseURL(raw)
		if !errors.Is(err, ErrBadConfig) {
			t.Errorf("ParseURL(%s) = %v (names %v, hash %q), want ErrBadConfig", raw, err, cfg.Shards, cfg.Hash)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "from") || strings.Contains(msg, "pw-From-55e1") || strings.Contains(msg, "ketama") {
			t.Errorf("ParseURL(%s) error %q: want it to name the from option and quote nothing of it", raw, msg)
		}
	}
	for _, tc := range []struct {
		raw                string
		outerHash, oldHash string
		oldName            string
	}{
		{newRing + "?hash=jedis&from=redis-ring://127.0.0.1:7001,127.0.0.1:7002?names=a,b", "jedis", "", "a"},
		{newRing + "?from=" + url.QueryEscape("redis-ring://127.0.0.1:7001,127.0.0.1:7002?names=a,b&hash=ketama") + "&hash=jedis", "jedis", "ketama", "a"},
		{newRing + "?from=redis-ring://127.0.0.1:7001,127.0.0.1:7002&hash=jedis", "jedis", "", ""},
	} {
		cfg, err := ParseURL(tc.raw)
		if err != nil {
			t.Errorf("ParseURL(%s): %v", tc.raw, err)
			continue
		}
		if cfg.Migration == nil || cfg.Migration.From == nil || len(cfg.Migration.From.Shards) != 2 {
			t.Errorf("ParseURL(%s): migration %+v, want one from a ring of 2 shards", tc.raw, cfg.Migration)
			continue
		}
		from := cfg.Migration.From
		if string(cfg.Hash) != tc.outerHash || string(from.Hash) != tc.oldHash || from.Shards[0].Name != tc.oldName {
			t.Errorf("ParseURL(%s): hash %q, old hash %q, old shard 0 named %q; want %q, %q, %q",
				tc.raw, cfg.Hash, from.Hash, from.Shards[0].Name, tc.outerHash, tc.oldHash, tc.oldName)
		}
	}
}
