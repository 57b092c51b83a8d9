package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// TestReview13URLRefusesFragment: a '#' starts a URL's fragment, but it
// was kept in a query value (client_name=x#y named the connections
// "x#y"). A URL with a '#' is refused, without quoting it: the '#' may
// be in a password.
func TestReview13URLRefusesFragment(t *testing.T) {
	for _, raw := range []string{
		"redis-ring://h1:6379?client_name=x#y",
		"redis-ring://h1:6379#frag",
		"redis-ring://h1:6379?db=1#",
		"redis-cluster://u:s3cr#etPw@h1:7000",
		"redis-ring+sentinel://s1:26379?shards=a&sentinel_password=s3cr#etPw",
	} {
		cfg, err := shard.ParseURL(raw)
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseURL(%q) = client name %q, %v; want ErrBadConfig", raw, cfg.Pool.ClientName, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "%23") {
			t.Errorf("ParseURL(%q): error %q does not say to write '#' as %%23", raw, msg)
		}
		if strings.Contains(msg, "s3cr") || strings.Contains(msg, "etPw") {
			t.Errorf("ParseURL(%q): error %q shows the password", raw, msg)
		}
	}
	cfg, err := shard.ParseURL("redis-ring://u:p%23w@h1:6379?client_name=x%23y")
	if err != nil || cfg.Pool.Password != "p#w" || cfg.Pool.ClientName != "x#y" {
		t.Fatalf("encoded '#': password %q, client name %q, %v", cfg.Pool.Password, cfg.Pool.ClientName, err)
	}
}
