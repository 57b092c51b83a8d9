package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/sentinel"
	"github.com/shardis/shardis/shard"
)

// TestReview9ConfigErrorsHaveOnePrefix: every configuration error starts
// with "shardis: bad config: " once (docs/config.md), but an invalid
// Migration.From gave "migration from: shardis: bad config: ...", a
// Sentinel shard's bad options "shardis: bad config: Sentinel shard "a":
// shardis: sentinel: bad options: ...", and a plain entry of a Sentinel
// URL's shards option "shardis: bad config: URL shards entry 1: shardis:
// bad shard list: entry 0 ..." (the entry's number given twice, and
// wrong the second time). The prefix now comes once, first, and the
// causes stay matchable.
func TestReview9ConfigErrorsHaveOnePrefix(t *testing.T) {
	one := []ring.Shard{{Addr: "127.0.0.1:7000", Weight: 1}}
	sentinelShard := []ring.Shard{{Name: "a", Weight: 1}}
	for _, tc := range []struct {
		name  string
		err   func() error
		cause error
		want  string
	}{
		{"Migration.From without shards", func() error {
			return shard.Config{Shards: one, Migration: &shard.Migration{From: &shard.Config{}}}.Validate()
		}, nil, "ring mode needs at least one shard"},
		{"Migration.From with bad pool options", func() error {
			return shard.Config{Shards: one, Migration: &shard.Migration{From: &shard.Config{Shards: one, Pool: pool.Options{MaxIdle: -1}}}}.Validate()
		}, pool.ErrBadOptions, "MaxIdle is -1"},
		{"Sentinel shard without Sentinels", func() error {
			return shard.Config{Shards: sentinelShard, Sentinel: shard.SentinelOptions{Shards: []shard.SentinelShard{{Name: "a"}}}}.Validate()
		}, sentinel.ErrBadOptions, `Sentinel shard "a"`},
		{"Sentinel URL with a bad plain entry", func() error {
			_, err := shard.ParseURL("redis-ring+sentinel://127.0.0.1:26379?shards=a,10.0.0.1:x+b")
			return err
		}, ring.ErrBadShardList, "URL shards entry 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !errors.Is(err, shard.ErrBadConfig) {
				t.Errorf("%q does not match ErrBadConfig", msg)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("%q does not match its cause %v", msg, tc.cause)
			}
			if !strings.HasPrefix(msg, "shardis: bad config: ") || strings.Count(msg, "shardis:") != 1 {
				t.Errorf("%q: want the prefix shardis: bad config: once, first", msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("%q does not say %q", msg, tc.want)
			}
			if strings.Count(msg, "entry") > 1 {
				t.Errorf("%q names the entry twice", msg)
			}
		})
	}
}
