package shard_test

import (
	"fmt"
	"testing"

	"github.com/shardis/shardis/shard"
)

// FuzzReview4ConfigSecrets fuzzes files with Sentinel sections, migration
// blocks and URLs with credentials. Whatever parses is accepted by
// Validate again, and nothing fmt prints of it depends on a password: the
// config printed with its passwords replaced prints the same.
func FuzzReview4ConfigSecrets(f *testing.F) {
	for _, s := range []string{
		"shards:\n  - {addr: '127.0.0.1:6381', name: a}\n  - name: b\n    sentinel: {master: mb, addrs: ['127.0.0.1:26379'], username: u, password: 'p@ss:w/rd%#'}\nsentinel: {password: 'def?ault', read_from: replica-random, failover_wait: 2s}\npool: {password: 'x y@z', db: 2}\n",
		"url: 'redis-ring+sentinel://u:p%40w@127.0.0.1:26379,[::1]:26380?shards=a=ma,127.0.0.1:6390+b&sentinel_password=s%3Fp'\n",
		"url: 'redis-cluster://:pw@127.0.0.1:7000'\nmigration:\n  from: 'redis-ring://u:old@127.0.0.1:6391?names=a'\n  addrs: {'127.0.0.1:7000': '[fd00::1]:7000'}\n",
		"{\"url\": \"redis-ring://127.0.0.1:6381\", \"migration\": {\"from\": \"redis-ring://127.0.0.1:6382\", \"addrs\": {\"127.0.0.1:6381\": \"\"}}}",
		"shards: [{name: a, sentinel: {addrs: ['::1:26379']}}]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := shard.ParseConfig(data)
		if err != nil {
			checkBadConfig(t, err, "", "")
			return
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("ParseConfig accepted a config that Validate refuses: %v", err)
		}
		other := withPasswords(cfg, "Q1")
		again := withPasswords(cfg, "Q2")
		for _, verb := range []string{"%v", "%+v", "%#v"} {
			if a, b := fmt.Sprintf(verb, other), fmt.Sprintf(verb, again); a != b {
				t.Fatalf("%s of the config depends on its passwords:\n%s\n%s", verb, a, b)
			}
			if a, b := fmt.Sprintf(verb, other.Sentinel), fmt.Sprintf(verb, again.Sentinel); a != b {
				t.Fatalf("%s of the Sentinel options depends on their passwords:\n%s\n%s", verb, a, b)
			}
		}
	})
}

// withPasswords returns cfg with every set password (pool, Sentinel, each
// Sentinel shard, the migration's old topology) replaced by p.
func withPasswords(cfg shard.Config, p string) shard.Config {
	set := func(s *string) {
		if *s != "" {
			*s = p
		}
	}
	set(&cfg.Pool.Password)
	set(&cfg.Sentinel.Password)
	shards := make([]shard.SentinelShard, len(cfg.Sentinel.Shards))
	copy(shards, cfg.Sentinel.Shards)
	for i := range shards {
		set(&shards[i].Password)
	}
	cfg.Sentinel.Shards = shards
	if m := cfg.Migration; m != nil && m.From != nil {
		from := withPasswords(*m.From, p)
		mig := *m
		mig.From = &from
		cfg.Migration = &mig
	}
	return cfg
}
