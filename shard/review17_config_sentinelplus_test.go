package shard_test

import (
	"net/url"
	"reflect"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// A plain entry of a Sentinel URL's shards option is HOST:PORT[:WEIGHT]+NAME,
// the '+' read as the space that separates the name. Written
// percent-encoded (%2B), as url.Values.Encode writes every '+', it stayed
// a '+' and the entry was refused as a bad port: a program that built
// the URL with net/url got a URL ParseURL refused.
func TestReview17SentinelURLEncodedPlus(t *testing.T) {
	want := []ring.Shard{{Addr: "10.0.0.3:6379", Name: "p", Weight: 2}, {Name: "a", Weight: 1}, {Addr: "10.0.0.4:6379", Name: "q+r", Weight: 1}}
	q := url.Values{"shards": {"10.0.0.3:6379:2+p,a,10.0.0.4:6379+q+r"}}
	for _, raw := range []string{
		"redis-ring+sentinel://10.0.9.1:26379?" + q.Encode(),
		"redis-ring+sentinel://10.0.9.1:26379?shards=10.0.0.3:6379:2+p,a,10.0.0.4:6379+q%2Br",
		"redis-ring+sentinel://10.0.9.1:26379?shards=10.0.0.3:6379:2%20p,a,10.0.0.4:6379%20q%2Br",
	} {
		cfg, err := shard.ParseURL(raw)
		if err != nil {
			t.Errorf("ParseURL(%s): %v", raw, err)
			continue
		}
		if !reflect.DeepEqual(cfg.Shards, want) {
			t.Errorf("ParseURL(%s): shards %v, want %v", raw, cfg.Shards, want)
		}
	}
}

// The '+' inside an IPv6 zone is the zone's: the separator is the first
// '+' after the address's ']'.
func TestReview17SentinelURLEncodedPlusAfterZone(t *testing.T) {
	q := url.Values{"shards": {"[fe80::1%a+b]:6379+p,a"}}
	raw := "redis-ring+sentinel://10.0.9.1:26379?" + q.Encode()
	cfg, err := shard.ParseURL(raw)
	if err != nil {
		t.Fatalf("ParseURL(%s): %v", raw, err)
	}
	if cfg.Shards[0].Name != "p" || cfg.Shards[0].Addr != "[fe80::1%a+b]:6379" {
		t.Fatalf("ParseURL(%s): first shard %v, want [fe80::1%%a+b]:6379 named p", raw, cfg.Shards[0])
	}
}
