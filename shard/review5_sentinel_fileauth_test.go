package shard_test

import (
	"testing"

	"github.com/shardis/shardis/shard"
)

// A config file's sentinel: section overrides only the fields it gives:
// naming a user there keeps the password its url: gave, and the other way
// round.
func TestSentinelFileSectionKeepsTheURLsOtherCredential(t *testing.T) {
	const url = "url: \"redis-ring+sentinel://127.0.0.1:26379?shards=a&sentinel_username=url-user&sentinel_password=url-pw\"\n"
	for _, tc := range []struct {
		name, section, user, password string
	}{
		{"user only", "sentinel: {username: file-user}\n", "file-user", "url-pw"},
		{"password only", "sentinel: {password: file-pw}\n", "url-user", "file-pw"},
		{"both", "sentinel: {username: file-user, password: file-pw}\n", "file-user", "file-pw"},
		{"neither", "", "url-user", "url-pw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := shard.ParseConfig([]byte(url + tc.section))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			if cfg.Sentinel.Username != tc.user || cfg.Sentinel.Password != tc.password {
				t.Errorf("Sentinel credentials: user %q, password %q; want %q, %q",
					cfg.Sentinel.Username, cfg.Sentinel.Password, tc.user, tc.password)
			}
		})
	}
}
