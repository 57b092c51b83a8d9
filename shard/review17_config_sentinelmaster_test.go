package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// A shards entry NAME= (a master name left out, as a template whose
// variable was never filled in writes it) watched the master set named
// NAME without a word, which may be another shard's.
func TestReview17SentinelURLEmptyMasterName(t *testing.T) {
	for _, shards := range []string{"a=", "a=,b=mb", "b=mb,a="} {
		raw := "redis-ring+sentinel://10.0.9.1:26379?shards=" + shards
		_, err := shard.ParseURL(raw)
		if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "master") || !strings.Contains(err.Error(), `"a="`) {
			t.Errorf("ParseURL(%s) = %v, want ErrBadConfig naming the entry a= and its master", raw, err)
		}
	}
	for raw, master := range map[string]string{
		"redis-ring+sentinel://10.0.9.1:26379?shards=a":      "",
		"redis-ring+sentinel://10.0.9.1:26379?shards=a=ma":   "ma",
		"redis-ring+sentinel://10.0.9.1:26379?shards=a=m=x":  "m=x",
		"redis-ring+sentinel://10.0.9.1:26379?shards=a=%20m": "", // refused below: not one word
	} {
		cfg, err := shard.ParseURL(raw)
		if strings.Contains(raw, "%20") {
			if !errors.Is(err, shard.ErrBadConfig) {
				t.Errorf("ParseURL(%s) = %v, want ErrBadConfig", raw, err)
			}
			continue
		}
		if err != nil || len(cfg.Sentinel.Shards) != 1 || cfg.Sentinel.Shards[0].MasterName != master {
			t.Errorf("ParseURL(%s) = %v, %v; want master name %q", raw, err, cfg.Sentinel.Shards, master)
		}
	}
}
