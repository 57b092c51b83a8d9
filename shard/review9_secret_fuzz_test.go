package shard_test

import (
	"encoding/json"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/shardis/shardis/shard"
)

// FuzzReview9ConfigEncodings fuzzes files with credentials in every place
// (pool, Sentinel defaults, Sentinel shards, a migration's old topology):
// the JSON and YAML encodings of the options that hold them never depend
// on a password, and never fail.
func FuzzReview9ConfigEncodings(f *testing.F) {
	for _, s := range []string{
		"shards:\n  - {addr: '127.0.0.1:6381', name: a}\n  - name: b\n    sentinel: {master: mb, addrs: ['127.0.0.1:26379'], username: u, password: 'p@ss:w/rd%#', tls: {server_name: s}}\nsentinel: {password: 'def?ault', read_from: replica-random, tls: {}}\npool: {password: 'x y@z', db: 2, tls: {server_name: r}}\n",
		"url: 'rediss-ring+sentinel://u:p%40w@127.0.0.1:26379?shards=a=ma,127.0.0.1:6390+b&sentinel_password=s%3Fp'\n",
		"url: 'redis-cluster://:pw@127.0.0.1:7000'\nmigration:\n  from: 'redis-ring://:pw@127.0.0.1:6391?names=a'\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := shard.ParseConfig(data)
		if err != nil {
			return // FuzzParseConfig checks the errors
		}
		a, b := withPasswords(cfg, "Q1-secret"), withPasswords(cfg, "Q2-secret")
		parts := func(c shard.Config) []any {
			out := []any{c.Pool, c.Sentinel, c.Sentinel.Shards}
			if m := c.Migration; m != nil && m.From != nil {
				out = append(out, m.From.Pool)
			}
			return out
		}
		pa, pb := parts(a), parts(b)
		for i := range pa {
			ja, err := json.Marshal(pa[i])
			if err != nil {
				t.Fatalf("json.Marshal(%T): %v", pa[i], err)
			}
			jb, _ := json.Marshal(pb[i])
			if string(ja) != string(jb) {
				t.Fatalf("json of %T depends on its passwords:\n%s\n%s", pa[i], ja, jb)
			}
			ya, err := yaml.Marshal(pa[i])
			if err != nil {
				t.Fatalf("yaml.Marshal(%T): %v", pa[i], err)
			}
			yb, _ := yaml.Marshal(pb[i])
			if string(ya) != string(yb) {
				t.Fatalf("yaml of %T depends on its passwords:\n%s\n%s", pa[i], ya, yb)
			}
		}
	})
}
