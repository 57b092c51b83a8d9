package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/hashtag"
	"github.com/shardis/shardis/shard"
)

// tag=no (or on, ok, No: a guess at a switch) was taken as the
// delimiter pair 'n' 'o', and in a YAML file "tag: no" stays the string
// "no": keys were placed by what lies between an 'n' and an 'o', with no
// error. Two letters or digits are now refused, through the URL and the
// file alike, with the accepted spellings; the documented pairs stay.
func TestReview15TagWordIsNoPair(t *testing.T) {
	const base = "redis-ring://127.0.0.1:6379,127.0.0.1:6380?hash=ketama&tag="
	for _, tag := range []string{"no", "No", "on", "ok", "42"} {
		cfg, err := shard.ParseURL(base + tag)
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !errors.Is(err, hashtag.ErrBadRule) || !strings.Contains(err.Error(), `"none"`) {
			t.Errorf("URL with tag=%s: %v; want an error wrapping hashtag.ErrBadRule naming \"none\"", tag, err)
		}
		yaml := "mode: ring\nhash: ketama\ntag: " + tag + "\nshards:\n  - addr: 127.0.0.1:6379\n  - addr: 127.0.0.1:6380\n"
		cfg, err = shard.ParseConfig([]byte(yaml))
		if err == nil {
			err = cfg.Validate()
		}
		if err == nil || !errors.Is(err, hashtag.ErrBadRule) {
			t.Errorf("file with tag: %s: %v; want an error wrapping hashtag.ErrBadRule", tag, err)
		}
	}
	for _, tag := range []string{"none", "cluster", "jedis", "{}", "$$", "::", "%2B%2B", "%26%26"} {
		cfg, err := shard.ParseURL(base + tag)
		if err == nil {
			err = cfg.Validate()
		}
		if err != nil {
			t.Errorf("URL with tag=%s: %v", tag, err)
		}
	}
}
