package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// TestReview9FileIntegersAreWholeNumbers: a file's integer fields took a
// number with a fraction and dropped the fraction without a word
// (weight: 1.5 became 1, moving keys off the shard, db: 2.5 selected
// database 2), and a YAML integer with a leading zero was read as octal
// (weight: 010 became 8). Both are now errors that name the field; whole
// numbers written as floats (2.0, 1e1, JSON's 3.0) stay accepted.
func TestReview9FileIntegersAreWholeNumbers(t *testing.T) {
	const shards = "shards: [{addr: '127.0.0.1:7000'}]\n"
	for _, tc := range []struct{ file, field string }{
		{"shards: [{addr: '127.0.0.1:7000', weight: 1.5}]", "shards[0].weight"},
		{"shards: [{addr: '127.0.0.1:7000', weight: 1.9}]", "shards[0].weight"},
		{`{"shards": [{"addr": "127.0.0.1:7000", "weight": 2.5}]}`, "shards[0].weight"},
		{shards + "pool: {db: 2.5}", "pool.db"},
		{shards + "pool: {max_idle: 1.5}", "pool.max_idle"},
		{shards + "health: {failure_limit: 2.5}", "health.failure_limit"},
		{"shards: [{addr: '127.0.0.1:7000', weight: 010}]", "shards[0].weight"},
		{shards + "pool: {max_active: 0100}", "pool.max_active"},
		{shards + "pool: {max_idle: .inf}", "pool.max_idle"},
	} {
		_, err := shard.ParseConfig([]byte(tc.file))
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseConfig(%q) = %v, want ErrBadConfig", tc.file, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("ParseConfig(%q) = %v, want it to name %s", tc.file, err, tc.field)
		}
	}
	for _, tc := range []struct {
		file   string
		weight int
	}{
		{"shards: [{addr: '127.0.0.1:7000', weight: 2.0}]", 2},
		{"shards: [{addr: '127.0.0.1:7000', weight: 1e1}]", 10},
		{`{"shards": [{"addr": "127.0.0.1:7000", "weight": 3.0}]}`, 3},
		{"shards: [{addr: '127.0.0.1:7000', weight: 10}]", 10},
		{"shards: [{addr: '127.0.0.1:7000', weight: 0o10}]", 8},
		{"shards: [{addr: '127.0.0.1:7000', weight: 0x10}]", 16},
	} {
		cfg, err := shard.ParseConfig([]byte(tc.file))
		if err != nil {
			t.Errorf("ParseConfig(%q): %v", tc.file, err)
			continue
		}
		if len(cfg.Shards) != 1 || cfg.Shards[0].Weight != tc.weight {
			t.Errorf("ParseConfig(%q) = %v, want weight %d", tc.file, cfg.Shards, tc.weight)
		}
	}
	cfg, err := shard.ParseConfig([]byte(shards + "pool: {db: 0}"))
	if err != nil || cfg.Pool.DB != 0 {
		t.Errorf("db: 0 = %v, %v", cfg.Pool.DB, err)
	}
}
