package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// password_env says a password is wanted: a variable that is set to
// nothing (a secret never filled in) is refused like one that is not set,
// for the pool and for a Sentinel shard's Sentinels, and the error names
// the variable and the block.
func TestReview9PasswordEnvSetToNothingIsRefused(t *testing.T) {
	t.Setenv("SHARDIS_REVIEW9_EMPTY_PW", "")
	tests := []struct {
		name string
		file string
		want string
	}{
		{"pool", `{"shards": [{"addr": "127.0.0.1:1"}], "pool": {"password_env": "SHARDIS_REVIEW9_EMPTY_PW"}}`,
			"pool.password_env names SHARDIS_REVIEW9_EMPTY_PW, which is empty"},
		{"sentinel", `{"shards": [{"name": "a", "sentinel": {"master": "m", "addrs": ["127.0.0.1:26379"]}}], "sentinel": {"password_env": "SHARDIS_REVIEW9_EMPTY_PW"}}`,
			"password_env names SHARDIS_REVIEW9_EMPTY_PW, which is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := shard.ParseConfig([]byte(tt.file))
			if err == nil {
				t.Fatal("an empty password variable was taken as no password")
			}
			if !errors.Is(err, shard.ErrBadConfig) {
				t.Fatalf("not ErrBadConfig: %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %q, want it to say %q", err, tt.want)
			}
		})
	}
}
