package shard_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// A URL whose user info has no ':' (redis-ring://SECRET@host, the
// password-only form some clients, Lettuce among them, accept) is
// refused, and the refusal must not quote the user info: it is the
// password more often than a user name.
func TestReview6URLUserInfoWithoutColonIsNotQuoted(t *testing.T) {
	const secret = "Lone-s3cret"
	for _, raw := range []string{
		"redis-ring://" + secret + "@127.0.0.1:6379",
		"rediss-ring://" + secret + "@127.0.0.1:6379,127.0.0.1:6380",
		"redis-cluster://" + secret + "@127.0.0.1:7000",
		"redis-ring+sentinel://" + secret + "@127.0.0.1:26379?shards=a",
		"redis-ring://127.0.0.1:6379?from=" + "redis-ring%3A%2F%2F" + secret + "%40127.0.0.1%3A6380",
	} {
		_, err := shard.ParseURL(raw)
		if err == nil {
			t.Errorf("ParseURL(%q) accepted a user name without a password", raw)
			continue
		}
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseURL(%q): error %v does not match ErrBadConfig", raw, err)
		}
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			if s := fmt.Sprintf(verb, err); strings.Contains(s, secret) {
				t.Errorf("ParseURL(%q): %s of the error shows the user info: %s", raw, verb, s)
			}
		}
	}
}
