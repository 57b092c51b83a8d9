package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// TestReview10URLPathSaysHowToNameTheDatabase: redis:// URLs name the
// database in the path (redis://h:6379/2); a redis-ring URL written so
// was refused with "address "h:6379/2": bad port", which blames the port
// for what is the database. The error now says to use the db option; a
// path left after a password that an unencoded '?' cut short stays the
// question-mark error, which quotes nothing.
func TestReview10URLPathSaysHowToNameTheDatabase(t *testing.T) {
	for _, raw := range []string{
		"redis-ring://u:pw@h1:6379,h2:6379/2",
		"redis-ring://h:6379/2?hash=jedis",
		"redis-cluster://h:7000/0",
	} {
		_, err := shard.ParseURL(raw)
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseURL(%q) = %v, want ErrBadConfig", raw, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "port") || !strings.Contains(msg, "db option") {
			t.Errorf("ParseURL(%q): %q, want the db option named, not the port", raw, msg)
		}
	}
	_, err := shard.ParseURL("redis-ring://u:s3cret/Pw?x@h:6379")
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "Pw") {
		t.Errorf("a '?' in the password: %v", err)
	}
}
