package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// TestURLQuestionMarkInPasswordIsNotQuoted: an unencoded '?' in a URL's
// password ends the address part early, and the user info ends up where
// the addresses are; the error must not quote it.
func TestURLQuestionMarkInPasswordIsNotQuoted(t *testing.T) {
	_, err := shard.ParseURL("redis-ring://app:pa?ss-word@127.0.0.1:6379")
	if err == nil || !errors.Is(err, shard.ErrBadConfig) {
		t.Fatalf("want ErrBadConfig, got %v", err)
	}
	if strings.Contains(err.Error(), "app:pa") || strings.Contains(err.Error(), "ss-word") {
		t.Fatalf("error quotes part of the password: %v", err)
	}
}

// TestConfigFileRefusesIgnoredOrContradictorySettings: a file's setting
// that its mode would ignore, or two that contradict each other, is an
// error, as in ParseURL, never silently dropped.
func TestConfigFileRefusesIgnoredOrContradictorySettings(t *testing.T) {
	t.Setenv("SHARDIS_TEST_PW", "from-env")
	for _, f := range []string{
		"shards: [{addr: '127.0.0.1:6379'}]\ncluster: {read_from: replcia-random}\n",
		"mode: cluster\nseeds: ['127.0.0.1:7000']\nhash: ketama\n",
		"mode: cluster\nseeds: ['127.0.0.1:7000']\nhealth: {auto_eject: true}\n",
		"shards: [{addr: '127.0.0.1:6379'}]\nsentinel: {addrs: ['127.0.0.1:26379'], read_from: bogus}\n",
		"shards: [{addr: '127.0.0.1:6379'}]\npool: {password: topsecret, password_env: SHARDIS_TEST_PW}\n",
	} {
		if _, err := shard.ParseConfig([]byte(f)); err == nil {
			t.Errorf("accepted without a word:\n%s", f)
		}
	}
}

// TestNestedConfigErrorsSayBadConfigOnce: errors of a migration's old
// topology (URL option from, a file's migration section) start with the
// prefix of every config error, once.
func TestNestedConfigErrorsSayBadConfigOnce(t *testing.T) {
	for _, err := range []error{
		func() error {
			_, e := shard.ParseURL("redis-ring://127.0.0.1:6379?from=redis-ring://127.0.0.1:1?bogus=1")
			return e
		}(),
		func() error {
			_, e := shard.ParseConfig([]byte("shards: [{addr: '127.0.0.1:6379'}]\nmigration: {from: 'nope'}\n"))
			return e
		}(),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "shardis: bad config: ") || strings.Count(err.Error(), "shardis: ") != 1 {
			t.Errorf("docs/config.md: every config error starts with %q once; got %v", "shardis: bad config: ", err)
		}
	}
}
