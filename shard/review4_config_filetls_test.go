package shard_test

import (
	"testing"

	"github.com/shardis/shardis/shard"
)

// docs/config.md: "tls: present (even empty): TLS on". A tls key with
// nothing after it is YAML null, which decoded to no TLS at all: the
// client then spoke plain text to servers the file meant to reach over
// TLS, without a word.
func TestReview4EmptyTLSKeyTurnsTLSOn(t *testing.T) {
	for _, tc := range []struct{ name, yaml string }{
		{"pool tls with nothing after it", "shards: [{addr: '127.0.0.1:6381'}]\npool:\n  tls:\n"},
		{"pool tls null", "shards: [{addr: '127.0.0.1:6381'}]\npool: {tls: ~}\n"},
		{"pool tls empty mapping", "shards: [{addr: '127.0.0.1:6381'}]\npool: {tls: {}}\n"},
		{"json pool tls null", `{"shards": [{"addr": "127.0.0.1:6381"}], "pool": {"tls": null}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := shard.ParseConfig([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Pool.TLSConfig == nil {
				t.Fatalf("pool TLS off for %q", tc.yaml)
			}
		})
	}
	cfg, err := shard.ParseConfig([]byte("shards:\n  - name: a\n    sentinel:\n      tls:\n  - name: b\n    sentinel: {master: mb}\nsentinel:\n  addrs: ['127.0.0.1:26379']\n  tls:\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Sentinel.TLSConfig == nil {
		t.Error("sentinel.tls with nothing after it: Sentinel TLS off")
	}
	if len(cfg.Sentinel.Shards) != 2 || cfg.Sentinel.Shards[0].TLSConfig == nil {
		t.Errorf("shards[0].sentinel.tls with nothing after it: shard's Sentinel TLS off (%v)", cfg.Sentinel)
	}
	// No tls key: no TLS.
	cfg, err = shard.ParseConfig([]byte("shards: [{addr: '127.0.0.1:6381'}]\npool: {max_idle: 2}\n"))
	if err != nil || cfg.Pool.TLSConfig != nil {
		t.Fatalf("no tls key: %v, TLS %v", err, cfg.Pool.TLSConfig != nil)
	}
}
