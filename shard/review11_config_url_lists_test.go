package shard_test

import (
	"slices"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview11FileListsAddToTheURLs: the file format's documentation said
// that a field given next to url overrides the URL's value, which holds
// for settings; the shards and seeds a file lists are added after the
// URL's hosts (a URL always names hosts), as they always were. This pins
// what the documentation now says.
func TestReview11FileListsAddToTheURLs(t *testing.T) {
	cfg, err := shard.ParseConfig([]byte("url: redis-ring://127.0.0.1:6379?db=1\nshards: [{addr: '127.0.0.1:6380', name: b, weight: 2}]\npool: {db: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []ring.Shard{{Addr: "127.0.0.1:6379", Weight: 1}, {Addr: "127.0.0.1:6380", Name: "b", Weight: 2}}
	if !slices.Equal(cfg.Shards, want) || cfg.Pool.DB != 2 {
		t.Errorf("shards %v, db %d; want %v and the file's db 2", cfg.Shards, cfg.Pool.DB, want)
	}
	cfg, err = shard.ParseConfig([]byte("url: redis-cluster://127.0.0.1:7000\nseeds: ['127.0.0.1:7001']\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"127.0.0.1:7000", "127.0.0.1:7001"}; !slices.Equal(cfg.Seeds, want) {
		t.Errorf("seeds %v, want %v", cfg.Seeds, want)
	}
}
