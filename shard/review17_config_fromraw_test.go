package shard_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// The from option holds a URL that ParseURL accepts percent-encoded or,
// given last, written as it is. Written as it is, query decoding read it
// otherwise than written: a '+' became a space and its own escapes were
// decoded twice, so that the tag pair "++", written %2B%2B as a URL
// wants it, reached the from URL as two spaces, and a password's %25
// turned into the start of another escape.
func TestReview17URLFromWrittenAsItIs(t *testing.T) {
	const from = "redis-ring://10.0.0.1:6379,10.0.0.2:6379?tag=%2B%2B"
	for _, raw := range []string{
		"redis-ring://10.0.0.5:6379?from=" + from,
		"redis-ring://10.0.0.5:6379?from=" + url.QueryEscape(from),
	} {
		cfg, err := shard.ParseURL(raw)
		if err != nil {
			t.Errorf("ParseURL(%s): %v", raw, err)
			continue
		}
		if cfg.Migration == nil || cfg.Migration.From == nil || cfg.Migration.From.Tag != "++" || len(cfg.Migration.From.Shards) != 2 {
			t.Errorf("ParseURL(%s): migration %v, want one from 2 shards with the tag ++", raw, cfg.Migration)
		}
	}
	// The '+' of redis-ring+sentinel stays one: the from URL is refused
	// for what it says (a Sentinel ring), not as an unknown scheme.
	_, err := shard.ParseURL("redis-ring://10.0.0.5:6379?from=redis-ring+sentinel://10.0.9.1:26379?shards=old-a")
	if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "Sentinel shards") {
		t.Errorf("from a Sentinel ring: %v, want ErrBadConfig about its Sentinel shards", err)
	}
}

// A from URL's password must be the client's (Migration): written as it
// is, "a+b%2541" is the password a+b%41 in the from URL as in the outer
// one.
func TestReview17URLFromPasswordWrittenAsItIs(t *testing.T) {
	const pw = "a+b%41" // written a+b%2541 in a URL
	raw := "redis-ring://:a+b%2541@10.0.0.5:6379?from=redis-ring://:a+b%2541@10.0.0.1:6379"
	cfg, err := shard.ParseURL(raw)
	if err != nil {
		t.Fatalf("ParseURL: %v", err)
	}
	if cfg.Pool.Password != pw || cfg.Migration == nil || cfg.Migration.From.Pool.Password != pw {
		t.Fatalf("passwords differ from %q (client's right: %v)", pw, cfg.Pool.Password == pw)
	}
	// Encoded, the from URL reads the same.
	enc := "redis-ring://:a+b%2541@10.0.0.5:6379?from=" + url.QueryEscape("redis-ring://:a+b%2541@10.0.0.1:6379")
	if cfg, err := shard.ParseURL(enc); err != nil || cfg.Migration.From.Pool.Password != pw {
		t.Fatalf("encoded from URL: err %v", err)
	}
	// A wrong one is still refused without showing either.
	_, err = shard.ParseURL("redis-ring://:a+b%2541@10.0.0.5:6379?from=redis-ring://:Other-9f1@10.0.0.1:6379")
	if !errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("another password in the from URL: %v, want ErrBadConfig", err)
	}
	for _, s := range []string{"Other-9f1", "a+b"} {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("error %q shows a password", err)
		}
	}
}
