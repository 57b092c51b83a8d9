package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// Bad configurations, as URLs and as files: each is ErrBadConfig, says
// what is wrong (want, in the error), and never shows the password
// (pw below, in every input that can hold it).
func TestReview17BadConfigInputs(t *testing.T) {
	const pw = "Pw-5ecret-91"
	urls := []struct{ in, want string }{
		{"redis-ring://:" + pw + "@h1:6379,h1:6379", "duplicate shard"},
		{"redis-ring://:" + pw + "@localhost:6379,127.0.0.1:6379", "same server"},
		{"redis-ring://:" + pw + "@H1:6379,h1:6379", "same server"},
		{"redis-ring://:" + pw + "@h1:1,h2:2?names=a,a", `called "a"`},
		{"redis-ring://:" + pw + "@h1:6379?weights=0", "weight 0"},
		{"redis-ring://:" + pw + "@h1:6379?weights=-2", "weight -2"},
		{"redis-ring://:" + pw + "@h1:0", "bad port"},
		{"redis-ring://:" + pw + "@h1:65536", "bad port"},
		{"redis-ring://:" + pw + "@h1:06379", "leading zero"},
		{"redis-ring://:" + pw + "@h1:", "host:port"},
		{"redis-ring://:" + pw + "@::1:6379", "brackets"},
		{"redis-ring://:" + pw + "@[::1]", "host:port"},
		{"redis-ring://:" + pw + "@", "no host"},
		{"redis-ring://:" + pw + "@h1:1,,h2:2", `address ""`},
		{"redis-ring://:" + pw + "%zz@h1:6379", "percent-encoding"},
		{"redis-ring://" + pw + "@h1:6379", "no ':'"},
		{"redis-ring://:" + pw + "@h1:6379?sahrds=1", `unknown URL option "sahrds"`},
		{"redis-ring://:" + pw + "@h1:6379?db=1&db=2", `"db" given 2 times`},
		{"redis-ring://:" + pw + "@h1:6379?read_timeout=-1s", "ReadTimeout"},
		{"redis-ring://:" + pw + "@h1:6379?read_timeout=soon", "read_timeout"},
		{"redis-ring://:" + pw + "@h1:6379?health_timeout=-1s", "Health.Timeout"},
		{"redis-ring://:" + pw + "@h1:6379?health_interval=1ns", "Health.Interval"},
		{"redis-ring://:" + pw + "@h1:6379?dial_timeout=-5s", "DialTimeout"},
		{"redis-ring://:" + pw + "@h1:6379?idle_timeout=-1s", "IdleTimeout"},
		{"redis-ring://:" + pw + "@h1:6379?read_from=replica-random", "cluster mode only"},
		{"redis-cluster://:" + pw + "@h1:7000?names=a", "ring mode only"},
		{"redis-cluster://:" + pw + "@h1:7000?db=2", "database 0"},
		{"redis-cluster://:" + pw + "@h1:7000?refresh_interval=5ns", "Cluster.RefreshInterval"},
		{"redis-ring://:" + pw + "@h1:6379?client_name=a%20b", "ClientName"},
		{"redis-ring://:" + pw + "@h1:6379#frag", "fragment"},
		{"redis-ring://:" + pw + "@h1:6379/2", "path"},
		{"redis-ring+sentinel://:" + pw + "@s1:26379?shards=a&sentinel_password=" + pw + "&sentinel_pasword=" + pw, `unknown URL option "sentinel_pasword"`},
		{"redis-ring+sentinel://:" + pw + "@s1:26379?shards=a&sentinel_timeout=-1s", "Sentinel.Timeout"},
		{"redis-ring+sentinel://:" + pw + "@s1:26379?shards=a,a", "listed twice"},
		{"redis-ring://:" + pw + "@h1:6379?from=" + "redis-ring://:" + pw + "@h2:0", "from"},
	}
	for _, tc := range urls {
		_, err := shard.ParseURL(tc.in)
		checkRefusal(t, "ParseURL("+strings.ReplaceAll(tc.in, pw, "PW")+")", err, tc.want, pw)
	}
	const ring = "shards: [{addr: 'h1:6379'}]\npool: {password: " + pw + "}\n"
	files := []struct{ in, want string }{
		{"sahrds: [{addr: 'h1:6379'}]\npool: {password: " + pw + "}", "unknown field sahrds"},
		{ring + "helath: {interval: 1s}", "unknown field helath"},
		{"shards: [{addr: 'h1:6379', wieght: 2}]", "unknown field shards[0].wieght"},
		{ring + "pool: {max_idle: 1}", `mapping key "pool" already defined`},
		{"{\"shards\": [{\"addr\": \"h1:6379\"}], \"shards\": []}", `mapping key "shards" already defined`},
		{"shards: [{addr: 'h1:6379'}, {addr: 'h1:6379'}]", "duplicate shard"},
		{"shards: [{addr: 'h1:6379', name: a}, {addr: 'h2:6379', name: a}]", `called "a"`},
		{"shards: [{addr: 'h1:6379', weight: 0}]", "weight 0"},
		{"shards: [{addr: 'h1:6379', weight: -1}]", "weight -1"},
		{"shards: [{addr: 'h1:6379', weight: 1.5}]", "whole number"},
		{"shards: [{addr: 'h1:65536'}]", "h1:65536"},
		{"shards: [{addr: '::1:6379'}]", "::1:6379"},
		{"shards: [{addr: 'u:" + pw + "@h1:6379'}]", "credentials"},
		{ring + "health: {timeout: -1s}", "Health.Timeout"},
		{"shards: [{addr: 'h1:6379'}]\npool: {password: " + pw + ", read_timeout: 5}", "pool.read_timeout"},
		{"shards: [{addr: 'h1:6379'}]\npool: {password: " + pw + ", read_timeout: soon}", "pool.read_timeout"},
		{"shards: [{addr: 'h1:6379'}]\npool: {password: " + pw + ", write_timeout: -1s}", "WriteTimeout"},
		{"mode: cluster\nseeds: ['h1:7000']\nshards: [{addr: 'h2:6379'}]", "cluster mode takes seeds"},
		{"url: 'redis-cluster://:" + pw + "@h1:7000'\nshards: [{addr: 'h2:6379'}]", "cluster mode takes seeds"},
		{"mode: ring\nseeds: ['h1:7000']", "at least one shard"},
		{"url: 'redis-ring://:" + pw + "@h1:0'", "bad port"},
		{"shards: [{addr: 'h1:6379'}]\npool: {password: " + pw + ", tls: {cert_file: /nonexistent/c.pem, key_file: /nonexistent/k.pem}}", "pool.tls"},
		{"shards: [{addr: 'h1:6379'}]\npool: {password: " + pw + ", tls: {key_file: /nonexistent/k.pem}}", "go together"},
		{"shards: [{name: a, sentinel: {master: m, pasword: " + pw + "}}]\nsentinel: {addrs: ['s1:26379']}", "shards[0].sentinel.pasword"},
		{ring + "migration: {from: 'redis-ring://:" + pw + "@h2:0'}", "migration"},
		{ring + "migration: {form: 'redis-ring://h2:6379'}", "migration.form"},
	}
	for _, tc := range files {
		_, err := shard.ParseConfig([]byte(tc.in))
		checkRefusal(t, "ParseConfig("+strings.ReplaceAll(tc.in, pw, "PW")+")", err, tc.want, pw)
	}
}

func checkRefusal(t *testing.T, what string, err error, want, pw string) {
	t.Helper()
	switch {
	case !errors.Is(err, shard.ErrBadConfig):
		t.Errorf("%s = %v, want ErrBadConfig", what, err)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%s = %v, want it to say %q", what, err, want)
	case strings.Contains(err.Error(), pw):
		t.Errorf("%s: error shows the password: %v", what, err)
	}
}

// Good inputs that look odd: a bracketed IPv6 host, a password holding
// '@', ':', '/', '%', ',' and '?' percent-encoded or as written where a
// URL allows it, a timeout of 0 (the default).
func TestReview17OddButGoodConfigInputs(t *testing.T) {
	for _, tc := range []struct{ in, addr, pw string }{
		{"redis-ring://[::1]:6379", "[::1]:6379", ""},
		{"redis-ring://[fe80::1%25eth0]:6379", "[fe80::1%eth0]:6379", ""},
		{"redis-ring://:p%40s%3As%2Fs%25x%2C%3F@h1:6379", "h1:6379", "p@s:s/s%x,?"},
		{"redis-ring://:p@s:s/s@h1:6379", "h1:6379", "p@s:s/s"},
		{"redis-ring://:a,b@h1:6379", "h1:6379", "a,b"},
		{"redis-ring://:a+b@h1:6379?read_timeout=0", "h1:6379", "a+b"},
	} {
		cfg, err := shard.ParseURL(tc.in)
		if err != nil {
			t.Errorf("ParseURL(%s): %v", tc.in, err)
			continue
		}
		if len(cfg.Shards) != 1 || cfg.Shards[0].Addr != tc.addr || cfg.Pool.Password != tc.pw {
			t.Errorf("ParseURL(%s): shards %v, password right: %v; want %s", tc.in, cfg.Shards, cfg.Pool.Password == tc.pw, tc.addr)
		}
	}
}
