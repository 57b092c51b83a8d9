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

// TestConfigFileExplicitValueOverridesURL: a file's url gives the base
// and its fields refine it; a field the file sets to zero or false is a
// setting too (db 0, wait false), not "unset", so it must override the
// url's value rather than leave it.
func TestConfigFileExplicitValueOverridesURL(t *testing.T) {
	const ring = "url: 'redis-ring://127.0.0.1:6379?db=3&wait=true&auto_eject=true&max_idle=7&failure_limit=4&health_interval=2s'\n"
	for _, tc := range []struct {
		file  string
		check func(shard.Config) bool
	}{
		{ring + "pool: {db: 0}\n", func(c shard.Config) bool { return c.Pool.DB == 0 }},
		{ring + "pool: {wait: false}\n", func(c shard.Config) bool { return !c.Pool.Wait }},
		{ring + "pool: {max_idle: 0}\n", func(c shard.Config) bool { return c.Pool.MaxIdle == 0 }},
		{ring + "health: {auto_eject: false}\n", func(c shard.Config) bool { return !c.Health.AutoEject }},
		{ring + "health: {failure_limit: 1}\n", func(c shard.Config) bool { return c.Health.FailureLimit == 1 }},
		{ring + "health: {interval: 0s}\n", func(c shard.Config) bool { return c.Health.Interval == 0 }},
		{"url: 'redis-cluster://127.0.0.1:7000?max_redirects=5'\ncluster: {max_redirects: 0}\n", func(c shard.Config) bool { return c.Cluster.MaxRedirects == 0 }},
		{"url: 'redis-ring+sentinel://127.0.0.1:26379?shards=a&failover_wait=3s'\nsentinel: {failover_wait: 0s}\n", func(c shard.Config) bool { return c.Sentinel.FailoverWait == 0 }},
		// What the file leaves out keeps the url's value.
		{ring + "pool: {max_active: 9}\n", func(c shard.Config) bool {
			return c.Pool.DB == 3 && c.Pool.Wait && c.Pool.MaxIdle == 7 && c.Pool.MaxActive == 9 && c.Health.AutoEject && c.Health.FailureLimit == 4
		}},
	} {
		cfg, err := shard.ParseConfig([]byte(tc.file))
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if !tc.check(cfg) {
			t.Errorf("the file's value did not win:\n%s", tc.file)
		}
	}
}
